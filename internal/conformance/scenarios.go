package conformance

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"

	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/naming"
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
			t := fleet.ASGTags(g.Tags)
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
// leaving one group per service, serving.
func firstDeploy(ctx context.Context, e *env) error {
	p, err := e.prepare("web.json", "")
	if err != nil {
		return err
	}
	x, err := e.run(ctx, p, nil)
	if err != nil {
		return err
	}
	if err := expectEnd(x, "Success", ""); err != nil {
		return err
	}
	return e.expectGroups(ctx, DeployerAccount, p.rel.ReleaseID, "web")
}
