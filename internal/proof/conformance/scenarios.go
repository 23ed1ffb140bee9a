package conformance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ferryhq/ferry/client/submit"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/naming/tags"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/halt"
	"github.com/ferryhq/ferry/internal/store/lock"
	"github.com/ferryhq/ferry/internal/tuning"
)

// group is what moto says of one Auto Scaling group of the project.
type group struct {
	name, release, service string
	instances              int
}

// groups lists the project's Auto Scaling groups in account, as moto has
// them.
func (e *env) groups(ctx context.Context, account string) ([]group, error) {
	c := autoscaling.NewFromConfig(motoConfig(e.moto.URL, account))
	var out []group
	p := autoscaling.NewDescribeAutoScalingGroupsPaginator(c, &autoscaling.DescribeAutoScalingGroupsInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing groups: %w", err)
		}
		for _, g := range page.AutoScalingGroups {
			t := tags.FromASG(g.Tags)
			if t[naming.TagProjectName] != Project {
				continue
			}
			out = append(out, group{name: aws.ToString(g.AutoScalingGroupName), release: t[naming.TagReleaseID],
				service: t[naming.TagServiceName], instances: len(g.Instances)})
		}
	}
	slices.SortFunc(out, func(a, b group) int {
		if a.service != b.service {
			if a.service < b.service {
				return -1
			}
			return 1
		}
		if a.release < b.release {
			return -1
		}
		return 1
	})
	return out, nil
}

// expectGroups checks that the project's groups in account are exactly one
// per listed service, of release, each with instances.
func (e *env) expectGroups(ctx context.Context, account, release string, svcs ...string) error {
	gs, err := e.groups(ctx, account)
	if err != nil {
		return err
	}
	var got []string
	ok := len(gs) == len(svcs)
	for i, g := range gs {
		got = append(got, fmt.Sprintf("%s(%s, %d instances)", g.service, g.release, g.instances))
		if ok && (g.service != svcs[i] || g.release != release || g.instances == 0) {
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("account %s has groups %v, want one serving group of release %s for each of %v", account, got, release, svcs)
	}
	return nil
}

// firstDeploy: the first release of a project deploys and succeeds,
// leaving one group per service, serving, with its scaling policy in moto
// (PutScalingPolicy) and the policy's alarm in the simulation's
// CloudWatch, whose action is the policy's ARN moto gave.
func firstDeploy(ctx context.Context, e *env) error {
	p, err := e.deploy(ctx, "web.json", nil, "Success", "", nil)
	if err != nil {
		return err
	}
	if err := e.expectGroups(ctx, DeployerAccount, p.Release.ReleaseID, "web"); err != nil {
		return err
	}
	grp := naming.GroupName(Project, Config, "web", p.Release.ReleaseID)
	pols, err := autoscaling.NewFromConfig(motoConfig(e.moto.URL, DeployerAccount)).DescribePolicies(ctx,
		&autoscaling.DescribePoliciesInput{AutoScalingGroupName: aws.String(grp)})
	if err != nil {
		return fmt.Errorf("the group's scaling policies: %w", err)
	}
	if len(pols.ScalingPolicies) != 1 {
		return fmt.Errorf("group %s has %d scaling policies in moto, want 1", grp, len(pols.ScalingPolicies))
	}
	alarm := naming.AlarmName(grp, "cpu_scale_up")
	out, err := e.world.Clients(DeployerAccount, Region).CloudWatch.DescribeAlarms(ctx, &cloudwatch.DescribeAlarmsInput{AlarmNames: []string{alarm}})
	if err != nil {
		return fmt.Errorf("the alarm %s: %w", alarm, err)
	}
	if len(out.MetricAlarms) != 1 || !slices.Equal(out.MetricAlarms[0].AlarmActions, []string{aws.ToString(pols.ScalingPolicies[0].PolicyARN)}) {
		return fmt.Errorf("alarm %s in the simulation's CloudWatch is %+v, want one whose action is moto's policy %s",
			alarm, out.MetricAlarms, aws.ToString(pols.ScalingPolicies[0].PolicyARN))
	}
	return nil
}

// deploy prepares and runs a release file and checks where it ended.
func (e *env) deploy(ctx context.Context, file string, edit func(*release.Release), final, errName string, observe func(asl.Event)) (*submit.Prepared, error) {
	p, err := e.prepare(ctx, file, edit)
	if err != nil {
		return nil, err
	}
	x, err := e.run(ctx, p, observe)
	if err != nil {
		return nil, err
	}
	return p, expectEnd(x, final, errName)
}

// swap: a second release replaces the first; the first release's groups
// are deleted (CleanUpSuccess, DeleteAutoScalingGroup with ForceDelete,
// Amazon EC2 Auto Scaling API Reference, DeleteAutoScalingGroup).
func swap(ctx context.Context, e *env) error {
	if _, err := e.deploy(ctx, "web.json", nil, "Success", "", nil); err != nil {
		return err
	}
	p2, err := e.deploy(ctx, "web.json", nil, "Success", "", nil)
	if err != nil {
		return err
	}
	return e.expectGroups(ctx, DeployerAccount, p2.Release.ReleaseID, "web")
}

// removedService: a release without a service the previous one had is
// refused unless it names it under remove; then its swap retires that
// service's group too.
func removedService(ctx context.Context, e *env) error {
	p1, err := e.deploy(ctx, "web-worker.json", nil, "Success", "", nil)
	if err != nil {
		return err
	}
	if err := e.expectGroups(ctx, DeployerAccount, p1.Release.ReleaseID, "web", "worker"); err != nil {
		return err
	}
	// Left out without being named under remove, worker is not retired:
	// the release is refused before anything is created.
	if _, err := e.deploy(ctx, "web.json", nil, "FailureClean", failure.NameBadRelease, nil); err != nil {
		return err
	}
	if err := e.expectGroups(ctx, DeployerAccount, p1.Release.ReleaseID, "web", "worker"); err != nil {
		return err
	}
	p2, err := e.deploy(ctx, "web.json", func(r *release.Release) { r.Remove = []string{"worker"} }, "Success", "", nil)
	if err != nil {
		return err
	}
	return e.expectGroups(ctx, DeployerAccount, p2.Release.ReleaseID, "web")
}

// badAMI: a release naming an image moto does not have is refused at
// ValidateResources (DescribeImages with a tag:Name filter answers an
// empty list, Amazon EC2 API Reference, DescribeImages: "If you specify
// ... filters, ... only the images that match"), ends FailureClean with
// BadReleaseError, and the previous release keeps serving.
func badAMI(ctx context.Context, e *env) error {
	p1, err := e.deploy(ctx, "web.json", nil, "Success", "", nil)
	if err != nil {
		return err
	}
	if _, err := e.deploy(ctx, "web.json", func(r *release.Release) { r.AMI = "no-such-image" },
		"FailureClean", failure.NameBadRelease, nil); err != nil {
		return err
	}
	return e.expectGroups(ctx, DeployerAccount, p1.Release.ReleaseID, "web")
}

// heldLock: while another release holds the project-config lock (an
// object written with If-None-Match: *, Amazon S3 User Guide,
// "Conditional writes": a second write of the key is 412
// PreconditionFailed), a release ends with LockExistsError and creates
// nothing.
func heldLock(ctx context.Context, e *env) error {
	if err := lock.New(e.s3, e.bucket(), e.clk).Acquire(ctx, Project, Config, lock.Holder{
		ReleaseID: "20000101T000000Z-other", Execution: e.smARN + ":other",
	}); err != nil {
		return fmt.Errorf("holding the lock: %w", err)
	}
	if _, err := e.deploy(ctx, "web.json", nil, "FailureClean", failure.NameLockExists, nil); err != nil {
		return err
	}
	gs, err := e.groups(ctx, DeployerAccount)
	if err != nil {
		return err
	}
	if len(gs) != 0 {
		return fmt.Errorf("a refused release left %d groups", len(gs))
	}
	return nil
}

// halt: a halt marker written while the second release waits for health
// (moto stamps its LastModified, Amazon S3 API Reference, HeadObject:
// Last-Modified) stops it with HaltError; it cleans up (FailureClean) and
// the previous release keeps serving.
func haltScenario(ctx context.Context, e *env) error {
	p1, err := e.deploy(ctx, "web.json", nil, "Success", "", nil)
	if err != nil {
		return err
	}
	var haltErr error
	written := false
	observe := func(ev asl.Event) {
		if written || ev.StateEntered == nil || ev.StateEntered.Name != "WaitForHealthy" {
			return
		}
		written = true
		haltErr = halt.New(e.s3, e.bucket()).Put(ctx, Project, Config, halt.Marker{By: "conformance", Reason: "halt scenario", At: e.clk.Now()})
	}
	_, err = e.deploy(ctx, "web.json", nil, "FailureClean", failure.NameHalt, observe)
	if haltErr != nil {
		return fmt.Errorf("writing the halt marker: %w", haltErr)
	}
	if !written {
		return fmt.Errorf("the second release never waited for health, so no halt marker was written")
	}
	if err != nil {
		return err
	}
	return e.expectGroups(ctx, DeployerAccount, p1.Release.ReleaseID, "web")
}

// assetPublished: a release's asset, uploaded to the deployer bucket, is
// published to the target's asset bucket under naming.TargetAssetKey with
// its bytes; a later release with another asset, two grace periods on,
// deletes it at its success (moto's ListObjectsV2 and DeleteObject): with
// one release kept, no release names it any more.
func assetPublished(ctx context.Context, e *env) error {
	p, err := e.deploy(ctx, "assets.json", nil, "Success", "", nil)
	if err != nil {
		return err
	}
	c := s3.NewFromConfig(motoConfig(e.moto.URL, DeployerAccount))
	bucket := naming.AssetBucketName(DeployerAccount, Region, "")
	key := func(p *submit.Prepared) string {
		return naming.TargetAssetKey(p.Release.ProjectName, p.Release.ConfigName, p.Release.Assets["app-config"].SHA256)
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key(p))})
	if err != nil {
		return fmt.Errorf("the published asset s3://%s/%s: %w", bucket, key(p), err)
	}
	defer out.Body.Close()
	body, err := io.ReadAll(out.Body)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	if got, want := hex.EncodeToString(sum[:]), p.Release.Assets["app-config"].SHA256; got != want {
		return fmt.Errorf("the published asset has SHA-256 %s, want %s", got, want)
	}
	if err := e.expectGroups(ctx, DeployerAccount, p.Release.ReleaseID, "web"); err != nil {
		return err
	}

	e.clk.Advance(2 * tuning.AssetGrace)
	p2, err := e.deploy(ctx, "assets.json", func(r *release.Release) { r.Assets["app-config"].Path = "assets/app-v2.conf" }, "Success", "", nil)
	if err != nil {
		return err
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key(p2))}); err != nil {
		return fmt.Errorf("the second release's asset s3://%s/%s: %w", bucket, key(p2), err)
	}
	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key(p))})
	if !cloud.IsNotFound(err) {
		return fmt.Errorf("the first release's asset s3://%s/%s, named by no kept release, is still there after the second's success (%v)", bucket, key(p), err)
	}
	return e.expectGroups(ctx, DeployerAccount, p2.Release.ReleaseID, "web")
}

// secondAccount: a release for another account deploys there through
// AssumeRole of that account's deploy role (moto switches accounts by the
// role ARN's account, as AWS STS does: AssumeRole returns credentials of
// the role's account), and nothing is made in the deployer's account.
func secondAccount(ctx context.Context, e *env) error {
	p, err := e.deploy(ctx, "web.json", func(r *release.Release) { r.AccountID = SecondAccount }, "Success", "", nil)
	if err != nil {
		return err
	}
	if err := e.expectGroups(ctx, SecondAccount, p.Release.ReleaseID, "web"); err != nil {
		return err
	}
	return e.expectGroups(ctx, DeployerAccount, p.Release.ReleaseID)
}

// destroyScenario: a destroy (ferry destroy's release: nothing to deploy)
// retires every group of the config at its swap and ends in Success with
// no group of the project left in moto.
func destroyScenario(ctx context.Context, e *env) error {
	p1, err := e.deploy(ctx, "web-worker.json", nil, "Success", "", nil)
	if err != nil {
		return err
	}
	e.seq++
	now := e.clk.Now()
	signer := identity.Signer{Credentials: e.awsCfg.Credentials, Region: Region, Endpoint: e.moto.URL, Clock: e.clk}
	d, err := submit.PrepareDestroy(ctx, signer, p1.Release, now, "conformance", fmt.Sprintf("%s-%d", now.UTC().Format("20060102T150405Z"), e.seq))
	if err != nil {
		return err
	}
	x, err := e.run(ctx, d, nil)
	if err != nil {
		return err
	}
	if err := expectEnd(x, "Success", ""); err != nil {
		return err
	}
	e.clk.Advance(10 * time.Minute) // moto deletes at once; the simulation's sweep is not involved
	gs, err := e.groups(ctx, DeployerAccount)
	if err != nil {
		return err
	}
	if len(gs) > 0 {
		return fmt.Errorf("after the destroy, moto still has the project's groups %+v", gs)
	}
	return nil
}

// driftScenario: a drift query, run through the definition's Query? and
// Drift, finds nothing where nothing changed, against moto's answers
// (DescribeAutoScalingGroups' LaunchTemplate, LoadBalancerNames,
// TargetGroupARNs and instances), and the min and max a person set by
// hand (UpdateAutoScalingGroup).
func driftScenario(ctx context.Context, e *env) error {
	p1, err := e.deploy(ctx, "web.json", nil, "Success", "", nil)
	if err != nil {
		return err
	}
	e.clk.Advance(time.Minute)
	query := func() (*execution.Drift, error) {
		input, _ := json.Marshal(execution.DriftInput{Drift: execution.DriftQuery{ProjectName: Project, ConfigName: Config}})
		e.seq++
		x, err := asl.Run(ctx, e.machine, asl.RunOptions{
			Input: input, Name: fmt.Sprintf("drift-%d", e.seq), StateMachineARN: e.smARN, Clock: e.clk,
			Waiter: asl.VirtualWaiter{Clock: e.clk},
			Invoker: region.TaskInvoker(e.fnARN, func(ctx context.Context, req execution.Request) (json.RawMessage, error) {
				return e.dep.Invoke(ctx, req)
			}),
		})
		if err != nil {
			return nil, err
		}
		if err := expectEnd(x, execution.EndAnswered, ""); err != nil {
			return nil, err
		}
		var d execution.Drift
		return &d, json.Unmarshal([]byte(x.Describe().Output), &d)
	}
	d, err := query()
	if err != nil {
		return err
	}
	if d.Deployed != p1.Release.ReleaseID || len(d.Drifts) > 0 {
		return fmt.Errorf("nothing changed, but the drift query answers %+v", d)
	}
	group := naming.GroupName(Project, Config, "web", p1.Release.ReleaseID)
	c := autoscaling.NewFromConfig(motoConfig(e.moto.URL, DeployerAccount))
	if _, err := c.UpdateAutoScalingGroup(ctx, &autoscaling.UpdateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(group), MinSize: aws.Int32(0), MaxSize: aws.Int32(9),
	}); err != nil {
		return err
	}
	if d, err = query(); err != nil {
		return err
	}
	if len(d.Drifts) != 1 || d.Drifts[0].Kind != execution.DriftCapacity || d.Drifts[0].Group != group {
		return fmt.Errorf("min and max set by hand, but the drift query answers %+v", d.Drifts)
	}
	return nil
}
