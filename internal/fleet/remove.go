package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming/tags"
)

// Remover removes named groups of one project-config, with their alarms
// and launch templates. See the package documentation.
type Remover struct {
	// Clients are the target's.
	Clients *cloud.Clients
	// Owner is the project-config; a visible group or template must
	// carry its tags.
	Owner Owner
	// Owns says, of a visible group or template of the Owner, whether it
	// may be removed (for example: made by this release, or by another).
	// One it refuses is left alone and reported as Skipped.
	Owns func(tags map[string]string) bool
	// Created are names made moments ago (by this release): for them
	// "not found" may mean "not visible yet", which is retryable unless
	// LastAttempt.
	Created map[string]bool
	// LastAttempt says no retry follows: "not found" means gone for every
	// name.
	LastAttempt bool
	// Described are groups as a describe showed them moments before, by
	// name (a caller's that needed them too): Remove asks AWS only for
	// the names not in it (DescribeKnown), and judges each group it
	// deletes on what it shows, as on a describe of its own.
	Described map[string]asgtypes.AutoScalingGroup
	// Log receives what is removed and what is left alone.
	Log *slog.Logger
}

// Removal is what Remove did.
type Removal struct {
	// Removed are the names whose group and launch template are gone
	// (deleted now, being deleted, or never there).
	Removed []string
	// Skipped are the names of groups or templates that are not the
	// Remover's to remove (another owner's tags): left alone.
	Skipped []string
}

// Remove removes the groups, launch templates and alarms of names (see
// the package documentation). Idempotent: what is gone stays gone.
func (r *Remover) Remove(ctx context.Context, names []string) (Removal, error) {
	names = slices.Clone(names)
	slices.Sort(names)
	names = slices.Compact(names)
	var res Removal
	if len(names) == 0 {
		return res, nil
	}
	c := r.Clients
	groups, err := DescribeKnown(ctx, c.AutoScaling, names, r.Described)
	if err != nil {
		return res, r.failed("describe groups", names, err)
	}
	templates, err := templatesNamed(ctx, c.EC2, names)
	if err != nil {
		return res, r.failed("describe launch templates", names, err)
	}
	alarms, err := Alarms(ctx, c.CloudWatch, r.Owner, names)
	if err != nil {
		return res, r.failed("describe alarms", names, err)
	}

	p := &progress{}
	removable := r.removable(p, &res, names, groups, templates)
	alarmsLeft := r.removeAlarms(ctx, p, removable, alarms)
	for _, name := range removable {
		g, groupVisible := groups[name]
		_, ltVisible := templates[name]
		if alarmsLeft[name] {
			continue
		}
		if !r.removeGroup(ctx, p, name, groupVisible && Deleting(g) || r.gone(name, groupVisible)) {
			continue
		}
		if !r.gone(name, ltVisible) && !r.removeTemplate(ctx, p, name) {
			continue
		}
		r.log().Info("removed", "name", name)
		res.Removed = append(res.Removed, name)
	}
	return res, p.err()
}

// removable are the names of names the Remover may remove: those whose
// group and template AWS shows (groups, templates) are the Remover's
// (the others are Skipped in res), and whose group is not in use
// (refused, recorded in p).
func (r *Remover) removable(p *progress, res *Removal, names []string, groups map[string]asgtypes.AutoScalingGroup, templates map[string]map[string]string) []string {
	var out []string
	for _, name := range names {
		g, groupVisible := groups[name]
		ltTags, ltVisible := templates[name]
		if groupVisible && !r.mine(tags.FromASG(g.Tags)) || ltVisible && !r.mine(ltTags) {
			r.log().Warn("not removed: not ours", "name", name)
			res.Skipped = append(res.Skipped, name)
			continue
		}
		if !refused(p, name, g, groupVisible) {
			out = append(out, name)
		}
	}
	return out
}

// refused says whether g, the group name (visible says AWS shows it),
// may not be deleted with ForceDelete (inUse), recording the failure and
// what is left when so.
func refused(p *progress, name string, g asgtypes.AutoScalingGroup, visible bool) bool {
	if !visible || Deleting(g) {
		return false
	}
	why := inUse(g)
	if why == "" {
		return false
	}
	p.fail("auto scaling group "+name, fmt.Errorf("not deleted: %s (a ForceDelete would cut its connections and skip its termination hooks; it must be retired first)", why))
	p.leftovers = append(p.leftovers, "launch template "+name, "alarms "+name+"/*")
	return true
}

// gone says whether a group or template of name that AWS did not show
// (visible false) is gone: one this release did not create moments ago
// (Created) is, as is every one on the last attempt. Its delete is not
// called: a retirement step that removes the groups left after an
// earlier throttled one would otherwise spend two calls of the account's
// shared Auto Scaling bucket on each group already deleted.
func (r *Remover) gone(name string, visible bool) bool {
	return !visible && (!r.Created[name] || r.LastAttempt)
}

func (r *Remover) mine(tags map[string]string) bool {
	return r.Owner.Marks(tags) && (r.Owns == nil || r.Owns(tags))
}

func (r *Remover) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// failed is a failure before anything was removed: every name is left.
func (r *Remover) failed(what string, names []string, err error) error {
	p := &progress{}
	p.fail(what, err)
	p.leftovers = append(p.leftovers, Leftovers(names...)...)
	return p.err()
}

// Leftovers names, for a record of what may be left, everything a removal
// of the named groups removes: each group (with its instances), its launch
// template and its alarms (named "<group>/*": naming.AlarmName).
func Leftovers(names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, "auto scaling group "+n, "launch template "+n, "alarms "+n+"/*")
	}
	return out
}

// inUse says why g may not be deleted with ForceDelete, whatever the
// time: it is attached to a load balancer or target group, or has
// instances InService or waiting on a termination hook
// (Terminating:Wait); "" when it may (empty, or only instances that
// serve nothing and run no hook).
func inUse(g asgtypes.AutoScalingGroup) string {
	var why []string
	if n := len(g.LoadBalancerNames) + len(g.TargetGroupARNs); n > 0 {
		why = append(why, fmt.Sprintf("attached to %d load balancers and target groups", n))
	}
	rg := census(g)
	if rg.InService > 0 {
		why = append(why, fmt.Sprintf("%d instances in service", rg.InService))
	}
	if rg.HooksPending > 0 {
		why = append(why, fmt.Sprintf("%d termination hooks pending", rg.HooksPending))
	}
	return strings.Join(why, ", ")
}

// removeAlarms deletes the alarms of the groups names, up to
// limits.MaxDeleteAlarms in one DeleteAlarms call whatever group they
// belong to (CloudWatch's DeleteAlarms quota is a few calls a second per
// account: one call a group would make a removal of 50 groups wait on
// it). It returns the groups some of whose alarms could not be deleted
// (they are then left with their launch templates, and named).
func (r *Remover) removeAlarms(ctx context.Context, p *progress, names []string, alarms map[string][]string) map[string]bool {
	var all []string
	owner := map[string]string{}
	for _, name := range names {
		for _, a := range alarms[name] {
			all, owner[a] = append(all, a), name
		}
	}
	left := map[string]bool{}
	for batch := range slices.Chunk(all, limits.MaxDeleteAlarms) {
		if err := deleteAlarms(ctx, r.Clients.CloudWatch, batch); err != nil {
			p.fail("alarms "+strings.Join(batch, ", "), err)
			for _, a := range batch {
				left[owner[a]] = true
			}
		}
	}
	for _, name := range names {
		if left[name] {
			p.leftovers = append(p.leftovers, "auto scaling group "+name, "launch template "+name)
		}
	}
	return left
}

// removeGroup deletes a group with its instances (ForceDelete), unless it
// is being deleted already; false when it may still be there. An error
// that may mean "gone" or "already being deleted" is settled by
// describing the group.
func (r *Remover) removeGroup(ctx context.Context, p *progress, name string, deleting bool) bool {
	if deleting {
		return true
	}
	api := r.Clients.AutoScaling
	_, err := api.DeleteAutoScalingGroup(ctx, &autoscaling.DeleteAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(name), ForceDelete: aws.Bool(true),
	})
	what := "auto scaling group " + name
	if err == nil {
		return true
	}
	if !cloud.IsCode(err, cloud.CodeValidation, cloud.CodeScalingActivityInProgress, cloud.CodeResourceInUse) {
		p.fail(what, err)
		p.leftovers = append(p.leftovers, "launch template "+name)
		return false
	}
	found, derr := Describe(ctx, api, []string{name})
	if derr != nil {
		p.fail(what, derr)
		p.leftovers = append(p.leftovers, "launch template "+name)
		return false
	}
	g, visible := found[name]
	switch {
	case visible && Deleting(g):
		return true
	case visible:
		// Busy, or "not found" from a delete that a describe contradicts
		// (eventual consistency): the same delete can succeed later.
		p.fail(what, &failure.RetryableError{Op: "autoscaling:DeleteAutoScalingGroup " + name, Err: err})
	case r.Created[name] && !r.LastAttempt:
		p.fail(what, notVisibleYet("autoscaling:DeleteAutoScalingGroup "+name))
	default:
		return true // gone
	}
	p.leftovers = append(p.leftovers, "launch template "+name)
	return false
}

// removeTemplate deletes a launch template; false when it may still be
// there.
func (r *Remover) removeTemplate(ctx context.Context, p *progress, name string) bool {
	_, err := r.Clients.EC2.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String(name)})
	switch {
	case err == nil:
		return true
	case !cloud.IsNotFoundCode(err, cloud.CodeLaunchTemplateNameNotFound, cloud.CodeLaunchTemplateIDNotFound):
		p.fail("launch template "+name, err)
	case r.Created[name] && !r.LastAttempt:
		p.fail("launch template "+name, notVisibleYet("ec2:DeleteLaunchTemplate "+name))
	default:
		return true // gone
	}
	return false
}

// notVisibleYet is the retryable error of a name this release created
// that AWS does not show yet (eventual consistency).
func notVisibleYet(op string) error {
	return &failure.RetryableError{Op: op, Err: errors.New("created moments ago and not visible yet (eventual consistency)")}
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

// progress collects a removal's failures and leftovers.
type progress struct {
	leftovers []string
	errs      []error
	permanent bool
}

// fail records that what could not be removed, with the error.
func (p *progress) fail(what string, err error) {
	err = cloud.Classify(what, err)
	if !failure.IsRetryable(err) {
		p.permanent = true
	}
	p.leftovers = append(p.leftovers, what)
	p.errs = append(p.errs, err)
}

// err is the removal's error: nil, a CleanUpError naming the leftovers, or
// a RetryableError around it when every failure was transient.
func (p *progress) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	ce := &failure.CleanUpError{Leftovers: p.leftovers, Err: errors.Join(p.errs...)}
	if !p.permanent {
		return &failure.RetryableError{Op: "clean up", Err: ce}
	}
	return ce
}
