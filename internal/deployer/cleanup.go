package deployer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/health"
	"github.com/ferryhq/ferry/internal/ledger"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/lock"
	"github.com/ferryhq/ferry/internal/naming"
)

// maxDeleteAlarms is how many alarms one DeleteAlarms call takes.
const maxDeleteAlarms = 100

// cleanUpSuccess is the CleanUpSuccess task. It re-checks that every new
// service is healthy (else a *failure.HaltError, and nothing is deleted),
// then deletes every other ASG of the project-config that ferry manages
// (found by tags, each re-verified: project, config, DeployWith and a
// release id other than this one), including those of services the
// release no longer has, with their alarms and launch templates. Then it
// writes the current record and the outcome, releases the lock and removes
// the halt marker.
//
// Something it could not delete is a *failure.CleanUpError listing the
// leftovers (the outcome records them; the lock is kept); when every
// failure was transient it is a *failure.RetryableError instead.
// Idempotent: a retry finds what is already gone gone.
func (d *Deployer) cleanUpSuccess(ctx context.Context, req execution.Request) (any, error) {
	st, err := decodeState(req)
	if err != nil {
		return nil, err
	}
	p := &cleanUpProgress{}
	out, err := d.doCleanUpSuccess(ctx, req, st, p)
	if err == nil {
		return out, nil
	}
	err = exhausted(req, err)
	switch name := failure.NameOf(err); {
	case name == failure.NameRetryable:
		return nil, err
	case !p.deleting && (name == failure.NameHalt || name == failure.NameDeploy):
		// Nothing deleted yet: a failed release, cleaned up as one.
		return nil, err
	}
	// Anything else leaves AWS, the records or the lock needing a person:
	// say what is left, in the outcome too.
	var ce *failure.CleanUpError
	if !errors.As(err, &ce) {
		ce = &failure.CleanUpError{Err: err}
	}
	var previous []string
	if !p.deleted {
		for _, g := range d.standingPrevious(ctx, st) {
			if !slices.ContainsFunc(ce.Leftovers, func(l string) bool { return strings.Contains(l, g) }) {
				previous = append(previous, g)
			}
		}
	}
	ce = &failure.CleanUpError{Leftovers: append(ce.Leftovers, p.leftovers(st, previous)...), Err: ce.Err}
	d.recordDirty(ctx, st, req, ce)
	return nil, ce
}

// standingPrevious names the previous groups (and so their launch
// templates, which share their names) still standing, for an outcome;
// nil when they cannot be listed.
func (d *Deployer) standingPrevious(ctx context.Context, st *execution.State) []string {
	c, err := d.connect(ctx, st, false)
	if err != nil {
		return nil
	}
	groups, err := projectGroups(ctx, c.AutoScaling, st.ProjectName, st.ConfigName)
	if err != nil {
		return nil
	}
	var names []string
	for _, g := range groups {
		if asgTags(g.Tags)[naming.TagReleaseID] != st.ReleaseID && !deleting(g) {
			names = append(names, aws.ToString(g.AutoScalingGroupName))
		}
	}
	sort.Strings(names)
	return names
}

// exhausted turns a transient error of the last attempt the state machine
// allows a task (limits.TaskRetryMaxAttempts retries behind it) into a
// *failure.CleanUpError, keeping the leftovers it names, so the clean-up
// records the FailureDirty outcome it is heading for. Earlier attempts,
// and errors that are not transient, are returned as they are.
func exhausted(req execution.Request, err error) error {
	if req.Execution.RetryCount < limits.TaskRetryMaxAttempts || failure.NameOf(err) != failure.NameRetryable {
		return err
	}
	cause := fmt.Errorf("still failing after %d retries: %w", limits.TaskRetryMaxAttempts, err)
	var ce *failure.CleanUpError
	if errors.As(err, &ce) {
		return &failure.CleanUpError{Leftovers: ce.Leftovers, Err: cause}
	}
	return &failure.CleanUpError{Err: cause}
}

// cleanUpProgress is how far CleanUpSuccess got, to name what a failure
// leaves behind.
type cleanUpProgress struct {
	deleting bool // deleting the previous groups started
	deleted  bool // the previous groups are gone and the new ones settled
}

// leftovers names what a CleanUpSuccess that failed at p leaves behind,
// besides the groups a CleanUpError already lists; previous are the other
// previous groups still standing, as far as they could be listed.
func (p *cleanUpProgress) leftovers(st *execution.State, previous []string) []string {
	var out []string
	for _, g := range previous {
		out = append(out, "previous group and launch template "+g+" (not deleted)")
	}
	if len(previous) == 0 && !p.deleting {
		out = append(out, "the previous groups of "+st.ProjectName+"/"+st.ConfigName+" (not deleted: both releases run)")
	}
	if !p.deleted {
		out = append(out, "the current record of "+st.ProjectName+"/"+st.ConfigName+" (still names the previous release)")
	}
	return append(out, "the lock "+naming.LockKey(st.ProjectName, st.ConfigName)+" (kept)")
}

func (d *Deployer) doCleanUpSuccess(ctx context.Context, req execution.Request, st *execution.State, p *cleanUpProgress) (any, error) {
	r, c, err := d.loadAndConnect(ctx, st, false)
	if err != nil {
		return nil, err
	}
	// A retry of a clean up that already deleted some previous groups is
	// past its point of no return: from here on a failure must not send
	// the release to CleanUpFailure, which would delete the new groups of
	// services whose previous group is gone.
	started, err := d.deletingStarted(ctx, st)
	if err != nil {
		return nil, err
	}
	p.deleting = started
	report, err := d.healthReport(ctx, c, st, r)
	if err != nil {
		return nil, err
	}
	// The health gate protects the previous groups. Once none is left
	// standing (a first release, or a retry after they were deleted) or
	// deleting has started, failing here would make CleanUpFailure delete
	// the only serving groups: the release is past its point of no return.
	groups, err := projectGroups(ctx, c.AutoScaling, st.ProjectName, st.ConfigName)
	if err != nil {
		return nil, err
	}
	standing := slices.ContainsFunc(groups, func(g asgtypes.AutoScalingGroup) bool {
		return asgTags(g.Tags)[naming.TagReleaseID] != st.ReleaseID && !deleting(g)
	})
	if bad := health.Unhealthy(report); len(bad) > 0 && standing && !started {
		return nil, &failure.HaltError{Reason: "no longer healthy before deleting the previous groups: " + joinNames(bad)}
	}
	if !started {
		if err := d.markDeleting(ctx, st, req); err != nil {
			return nil, err
		}
		p.deleting = true
	}
	removed, err := d.removeGroups(ctx, c, st, func(tags map[string]string) bool {
		return tags[naming.TagReleaseID] != st.ReleaseID
	}, nil)
	if err != nil {
		return nil, err
	}
	if err := d.settle(ctx, c, st, report); err != nil {
		return nil, err
	}
	p.deleted = true

	now := d.now()
	sums := map[string]string{}
	for _, svc := range st.Services {
		data, err := d.ledger.GetUserData(ctx, st.ProjectName, st.ConfigName, st.ReleaseID, svc)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		sums[svc] = hex.EncodeToString(sum[:])
	}
	if err := d.ledger.PutCurrent(ctx, st.ProjectName, st.ConfigName, ledger.Current{
		ReleaseID: st.ReleaseID, Execution: req.Execution.ID, ReleaseSHA256: st.ReleaseSHA256,
		CreatedBy: r.CreatedBy, DeployedAt: now, UserDataSHA256: sums, Services: st.Services,
	}); err != nil {
		return nil, err
	}
	// The outcome is written before the lock is released: a failure
	// releasing it overwrites the outcome with FailureDirty.
	if err := d.ledger.PutOutcome(ctx, st.ProjectName, st.ConfigName, ledger.Outcome{
		ReleaseID: st.ReleaseID, Execution: req.Execution.ID, End: execution.EndSuccess,
		StartedAt: req.Execution.StartTime, EndedAt: now, CreatedBy: r.CreatedBy,
	}); err != nil {
		return nil, err
	}
	if err := d.finish(ctx, st); err != nil {
		return nil, err
	}
	d.log.Info("release succeeded", "release_id", st.ReleaseID, "removed_groups", removed)
	return st, nil
}

// deletingStarted reports whether this release's CleanUpSuccess has
// started deleting the previous groups: its marker (naming.DeletingKey)
// exists. Only "not found" means it has not; any other failure to read
// the marker is a *failure.CleanUpError (a person decides: it may be a
// retry past the point of no return), or retryable when transient.
func (d *Deployer) deletingStarted(ctx context.Context, st *execution.State) (bool, error) {
	key := naming.DeletingKey(st.ProjectName, st.ConfigName, st.ReleaseID)
	_, err := d.store.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(d.cfg.Bucket), Key: aws.String(key)})
	switch {
	case err == nil:
		return true, nil
	case cloud.IsNotFound(err):
		return false, nil
	}
	err = cloud.Classify("s3:HeadObject "+key, err)
	if failure.NameOf(err) == failure.NameRetryable {
		return false, err
	}
	return false, &failure.CleanUpError{Err: err}
}

// markDeleting writes this release's deleting marker (naming.DeletingKey)
// before the first previous group is deleted. Overwriting it is harmless.
// A failure is a *failure.DeployError (nothing is deleted yet), or
// retryable when transient.
func (d *Deployer) markDeleting(ctx context.Context, st *execution.State, req execution.Request) error {
	key := naming.DeletingKey(st.ProjectName, st.ConfigName, st.ReleaseID)
	body, err := json.Marshal(map[string]any{"release_id": st.ReleaseID, "execution": req.Execution.ID, "since": d.now()})
	if err != nil {
		return &failure.InternalError{Msg: fmt.Sprintf("encoding the deleting marker: %v", err)}
	}
	_, err = d.store.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(d.cfg.Bucket), Key: aws.String(key), Body: bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))), ContentType: aws.String("application/json"),
	})
	if err != nil {
		return deployErr("s3:PutObject "+key, err)
	}
	return nil
}

// settle scales each new group from its launch count down to the service's
// desired capacity, now that the previous groups are gone: the spread is
// extra capacity for the deploy only, and a next release sizes itself from
// this group's desired capacity. Groups already at or below it are left
// alone (a retry, or a scale-up by the service's own policies since). A
// refused update is a *failure.CleanUpError naming the group and the
// capacity it kept.
func (d *Deployer) settle(ctx context.Context, c *cloud.Clients, st *execution.State, report map[string]execution.ServiceHealth) error {
	for _, svc := range st.Services {
		s := report[svc]
		if s.Desired <= 0 || s.Launched <= s.Desired {
			continue
		}
		name := naming.GroupName(st.ProjectName, st.ConfigName, svc, st.ReleaseID)
		_, err := c.AutoScaling.UpdateAutoScalingGroup(ctx, &autoscaling.UpdateAutoScalingGroupInput{
			AutoScalingGroupName: aws.String(name), DesiredCapacity: aws.Int32(int32(s.Desired)),
		})
		if err != nil {
			err = cloud.Classify("autoscaling:UpdateAutoScalingGroup "+name, err)
			if failure.NameOf(err) == failure.NameRetryable {
				return err
			}
			return &failure.CleanUpError{
				Leftovers: []string{fmt.Sprintf("%s: %d instances, desired %d", name, s.Launched, s.Desired)},
				Err:       err,
			}
		}
		d.log.Info("scaled to desired capacity", "release_id", st.ReleaseID, "asg", name, "desired", s.Desired)
	}
	return nil
}

// cleanUpFailure is the CleanUpFailure task: it deletes what this release
// created (ASGs and launch templates found by their ReleaseID tag and
// re-verified, and their alarms). Anything it could not delete is a
// *failure.CleanUpError listing the leftovers, recorded in the outcome as
// FailureDirty (the lock is kept); when every failure was transient it is a
// *failure.RetryableError instead. On success it writes nothing: ReleaseLock
// records the outcome. Idempotent.
func (d *Deployer) cleanUpFailure(ctx context.Context, req execution.Request) (any, error) {
	st, err := decodeState(req)
	if err != nil {
		return nil, err
	}
	whatever := "whatever release " + st.ReleaseID + " created in " + st.Target.AccountID + "/" + st.Target.Region
	c, err := d.connect(ctx, st, false)
	if err != nil {
		if err = exhausted(req, err); failure.NameOf(err) != failure.NameRetryable {
			err = &failure.CleanUpError{Leftovers: []string{whatever}, Err: err}
			d.recordDirty(ctx, st, req, err)
		}
		return nil, err
	}
	names := make([]string, len(st.Services))
	for i, svc := range st.Services {
		names[i] = naming.GroupName(st.ProjectName, st.ConfigName, svc, st.ReleaseID)
	}
	removed, err := d.removeGroups(ctx, c, st, func(tags map[string]string) bool {
		return tags[naming.TagReleaseID] == st.ReleaseID
	}, names)
	if err != nil {
		var ce *failure.CleanUpError
		if err = exhausted(req, err); errors.As(err, &ce) && len(ce.Leftovers) == 0 && failure.NameOf(err) == failure.NameCleanUp {
			err = &failure.CleanUpError{Leftovers: []string{whatever}, Err: ce.Err}
		}
		d.recordDirty(ctx, st, req, err)
		return nil, err
	}
	d.log.Info("release cleaned up", "release_id", st.ReleaseID, "removed_groups", removed)
	return st, nil
}

// releaseLock is the ReleaseLock task: it records the outcome
// FailureClean with the error the State carries, releases the lock and
// removes the halt marker. It never touches the target. Idempotent.
func (d *Deployer) releaseLock(ctx context.Context, req execution.Request) (any, error) {
	st, err := decodeState(req)
	if err != nil {
		return nil, err
	}
	o := ledger.Outcome{
		ReleaseID: st.ReleaseID, Execution: req.Execution.ID, End: execution.EndFailureClean,
		StartedAt: req.Execution.StartTime, EndedAt: d.now(), CreatedBy: d.createdBy(ctx, st),
	}
	if st.Error != nil {
		o.Error, o.Cause = st.Error.Error, st.Error.Cause
	}
	err = d.ledger.PutOutcome(ctx, st.ProjectName, st.ConfigName, o)
	if err == nil {
		err = d.finish(ctx, st)
	}
	if err == nil {
		return st, nil
	}
	// On the last attempt, say in the outcome (if S3 takes it) that the
	// lock is kept: the execution ends FailureDirty.
	if err = exhausted(req, err); failure.NameOf(err) != failure.NameRetryable {
		err = &failure.LockError{Op: "release", Err: err}
		d.recordDirty(ctx, st, req, &failure.CleanUpError{
			Leftovers: []string{"the lock " + naming.LockKey(st.ProjectName, st.ConfigName) + " (kept)"}, Err: err,
		})
	}
	return nil, err
}

// finish removes the halt marker, then releases the lock, last, so a
// failure anywhere before keeps the lock. A lock held by another release is
// not this release's to release: it is left alone, and so is the halt
// marker, which then belongs to that release's execution (this happens when
// Lock itself failed, for example a Lambda that died before or after
// writing the lock). A halt marker that cannot be removed for a reason other
// than a transient one is left, with a warning: it is harmless, since an
// execution only heeds markers written after it started.
func (d *Deployer) finish(ctx context.Context, st *execution.State) error {
	h, held, err := d.locks.Get(ctx, st.ProjectName, st.ConfigName)
	if err != nil {
		return err
	}
	if held && h.ReleaseID != st.ReleaseID {
		d.log.Warn("lock held by another release: left alone", "release_id", st.ReleaseID, "holder", h.ReleaseID)
		return nil
	}
	if err := d.halts.Clear(ctx, st.ProjectName, st.ConfigName); err != nil {
		if failure.NameOf(err) == failure.NameRetryable {
			return err
		}
		d.log.Warn("halt marker left behind (harmless: later executions ignore it)", "release_id", st.ReleaseID, "error", err.Error())
	}
	if !held {
		return nil
	}
	err = d.locks.Release(ctx, st.ProjectName, st.ConfigName, st.ReleaseID)
	if errors.Is(err, lock.ErrNotHolder) {
		d.log.Warn("lock taken by another release meanwhile: left alone", "release_id", st.ReleaseID, "error", err.Error())
		return nil
	}
	return err
}

// createdBy is who asked for the release, for the outcome record; ""
// when the release cannot be read (the outcome is still written).
func (d *Deployer) createdBy(ctx context.Context, st *execution.State) string {
	r, err := d.ledger.GetRelease(ctx, st.ProjectName, st.ConfigName, st.ReleaseID)
	if err != nil {
		d.log.Warn("cannot read the release for its outcome", "release_id", st.ReleaseID, "error", err.Error())
		return ""
	}
	return r.CreatedBy
}

// recordDirty records the outcome FailureDirty for a clean up that left
// resources behind (not for a transient failure, which the state machine
// retries). A failure to record it is logged: the error itself is what
// the state machine acts on.
func (d *Deployer) recordDirty(ctx context.Context, st *execution.State, req execution.Request, err error) {
	var ce *failure.CleanUpError
	if failure.NameOf(err) != failure.NameCleanUp || !errors.As(err, &ce) {
		return
	}
	o := ledger.Outcome{
		ReleaseID: st.ReleaseID, Execution: req.Execution.ID, End: execution.EndFailureDirty,
		Error: failure.NameCleanUp, Cause: err.Error(), Leftovers: ce.Leftovers,
		StartedAt: req.Execution.StartTime, EndedAt: d.now(), CreatedBy: d.createdBy(ctx, st),
	}
	if st.Error != nil {
		o.Error, o.Cause = st.Error.Error, st.Error.Cause+"; then "+err.Error()
	}
	if perr := d.ledger.PutOutcome(ctx, st.ProjectName, st.ConfigName, o); perr != nil {
		d.log.Error("cannot record the outcome", "release_id", st.ReleaseID, "error", perr.Error())
	}
}

// removeGroups deletes the ASGs and launch templates of the project-config
// whose tags doomed accepts (after the project, config and DeployWith tags
// are checked), with the alarms of those groups, and the alarms of the
// groups named in extra (groups named in extra that the tag-filtered
// listing misses are also described by name). For each group: alarms, then the ASG (with its
// instances, ForceDelete), then the launch template, so a retry after a
// partial failure still finds what is left by its tags and name. It
// returns the names of the groups removed; a failure is a
// *failure.CleanUpError listing the leftovers, or a
// *failure.RetryableError wrapping it when every failure was transient.
func (d *Deployer) removeGroups(ctx context.Context, c *cloud.Clients, st *execution.State, doomed func(map[string]string) bool, extra []string) ([]string, error) {
	groups, err := projectGroups(ctx, c.AutoScaling, st.ProjectName, st.ConfigName)
	if err != nil {
		return nil, err
	}
	// A tag-filtered describe may not show a group created moments ago
	// (eventual consistency): the groups named in extra that it missed are
	// described by name, and re-checked the same way.
	var missing []string
	for _, name := range extra {
		if !slices.ContainsFunc(groups, func(g asgtypes.AutoScalingGroup) bool { return aws.ToString(g.AutoScalingGroupName) == name }) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		byName, err := describeGroups(ctx, c.AutoScaling, missing)
		if err != nil {
			return nil, err
		}
		for _, name := range sortedKeys(byName) {
			if g := byName[name]; projectTagged(asgTags(g.Tags), st.ProjectName, st.ConfigName) {
				groups = append(groups, g)
			}
		}
	}
	templates, err := projectTemplates(ctx, c.EC2, st.ProjectName, st.ConfigName)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	deleteGroup := map[string]bool{}
	for _, g := range groups {
		name := aws.ToString(g.AutoScalingGroupName)
		if doomed(asgTags(g.Tags)) {
			names[name] = true
			deleteGroup[name] = !deleting(g)
		}
	}
	deleteTemplate := map[string]bool{}
	for name, tags := range templates {
		if doomed(tags) {
			names[name] = true
			deleteTemplate[name] = true
		}
	}
	for _, name := range extra {
		names[name] = true
	}
	if len(names) == 0 {
		return nil, nil
	}
	alarms, err := d.groupAlarms(ctx, c.CloudWatch, st, names)
	if err != nil {
		return nil, err
	}

	var leftovers []string
	var errs []error
	transient := true
	fail := func(what string, err error) {
		err = cloud.Classify(what, err)
		if failure.NameOf(err) != failure.NameRetryable {
			transient = false
		}
		leftovers = append(leftovers, what)
		errs = append(errs, err)
	}
	var removed []string
	for _, name := range sortedKeys(names) {
		if as := alarms[name]; len(as) > 0 {
			failed := false
			for batch := range slices.Chunk(as, maxDeleteAlarms) {
				if err := deleteAlarms(ctx, c.CloudWatch, batch); err != nil {
					fail("alarms "+strings.Join(batch, ", "), err)
					failed = true
				}
			}
			if failed {
				d.leftBehind(&leftovers, name, deleteGroup[name], deleteTemplate[name])
				continue
			}
		}
		if deleteGroup[name] {
			_, err := c.AutoScaling.DeleteAutoScalingGroup(ctx, &autoscaling.DeleteAutoScalingGroupInput{
				AutoScalingGroupName: aws.String(name), ForceDelete: aws.Bool(true),
			})
			if isCode(err, cloud.CodeScalingActivityInProgress, cloud.CodeResourceInUse) && !groupGone(err) {
				// The group is busy; the same delete can succeed later.
				err = &failure.RetryableError{Op: "autoscaling:DeleteAutoScalingGroup " + name, Err: err}
			}
			if err != nil && !groupGone(err) {
				fail("auto scaling group "+name, err)
				d.leftBehind(&leftovers, name, false, deleteTemplate[name])
				continue
			}
		}
		if deleteTemplate[name] {
			_, err := c.EC2.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String(name)})
			if err != nil && !cloud.IsNotFoundCode(err, cloud.CodeLaunchTemplateNameNotFound, cloud.CodeLaunchTemplateIDNotFound) {
				fail("launch template "+name, err)
				continue
			}
		}
		if deleteGroup[name] || deleteTemplate[name] {
			removed = append(removed, name)
		}
	}
	if len(errs) == 0 {
		return removed, nil
	}
	ce := &failure.CleanUpError{Leftovers: leftovers, Err: errors.Join(errs...)}
	if transient {
		return removed, &failure.RetryableError{Op: "clean up", Err: ce}
	}
	return removed, ce
}

// leftBehind adds a group's ASG and launch template to the leftovers when
// they were not deleted because an earlier step for that group failed.
func (d *Deployer) leftBehind(leftovers *[]string, name string, group, template bool) {
	if group {
		*leftovers = append(*leftovers, "auto scaling group "+name)
	}
	if template {
		*leftovers = append(*leftovers, "launch template "+name)
	}
}

// groupGone reports whether a DeleteAutoScalingGroup error says the group
// is already gone or already being deleted.
func groupGone(err error) bool {
	if cloud.IsNotFoundCode(err) {
		return true
	}
	if isCode(err, cloud.CodeValidation) && strings.Contains(strings.ToLower(err.Error()), "not found") {
		return true
	}
	return isCode(err, cloud.CodeScalingActivityInProgress) && strings.Contains(strings.ToLower(err.Error()), "delete")
}

// groupAlarms returns the alarms of the named groups, by group: the alarms
// of the project-config whose name is naming.AlarmName(group, ...) and
// whose AutoScalingGroupName dimension is that group.
func (d *Deployer) groupAlarms(ctx context.Context, api cloud.CloudWatch, st *execution.State, names map[string]bool) (map[string][]string, error) {
	in := &cloudwatch.DescribeAlarmsInput{AlarmNamePrefix: aws.String(naming.GroupPrefix(st.ProjectName, st.ConfigName))}
	out := map[string][]string{}
	for {
		page, err := api.DescribeAlarms(ctx, in)
		if err != nil {
			return nil, cloud.Classify("cloudwatch:DescribeAlarms", err)
		}
		for _, a := range page.MetricAlarms {
			alarm := aws.ToString(a.AlarmName)
			for _, dim := range a.Dimensions {
				group := aws.ToString(dim.Value)
				if aws.ToString(dim.Name) == "AutoScalingGroupName" && names[group] && strings.HasPrefix(alarm, naming.AlarmName(group, "")) {
					out[group] = append(out[group], alarm)
				}
			}
		}
		if aws.ToString(page.NextToken) == "" {
			return out, nil
		}
		in.NextToken = page.NextToken
	}
}

// deleteAlarms deletes alarms; one that is already gone is not an error.
// When a batch fails because some alarm is gone (some API versions then
// delete none of them), the alarms are deleted one at a time.
func deleteAlarms(ctx context.Context, api cloud.CloudWatch, names []string) error {
	_, err := api.DeleteAlarms(ctx, &cloudwatch.DeleteAlarmsInput{AlarmNames: names})
	if err == nil || !cloud.IsNotFoundCode(err) {
		return err
	}
	for _, n := range names {
		if _, err := api.DeleteAlarms(ctx, &cloudwatch.DeleteAlarmsInput{AlarmNames: []string{n}}); err != nil && !cloud.IsNotFoundCode(err) {
			return err
		}
	}
	return nil
}
