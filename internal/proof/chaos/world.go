package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"

	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// worldEvent makes a world event, as the world's owner or AWS would; one
// with nothing to act on is skipped.
func (p *player) worldEvent(ctx context.Context, s Step) error {
	w := p.reg.World()
	p.mu.Lock()
	where := regionOf(p.succeeded[len(p.succeeded)-1])
	p.mu.Unlock()
	var err error
	switch s.Kind {
	case KindZone:
		zone := strings.Replace(s.P, awsRegion, where, 1)
		err = w.Faults().ImpairZone(account, where, zone, p.clk.Now().Add(time.Duration(s.D)*time.Second))
	case KindFail:
		err = w.Faults().FailLaunches(account, where, s.D, "We currently do not have sufficient capacity in the Availability Zone you requested.")
	default:
		var done bool
		if done, err = p.meddle(ctx, s); !done {
			return err
		}
	}
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.events++
	p.mu.Unlock()
	return nil
}

// meddle makes a world event on one of ferry's groups; done is false
// when there is none to act on, or AWS refused (the world's owner does
// not insist).
func (p *player) meddle(ctx context.Context, s Step) (done bool, err error) {
	groups := ferryGroups(p.reg.World().Snapshot())
	if len(groups) == 0 {
		return false, nil
	}
	g := groups[s.N%len(groups)]
	var m region.Meddling
	switch s.Kind {
	case KindKill:
		live := instancesOf(groups, func(i sim.InstanceSnapshot) bool { return !strings.HasPrefix(i.Lifecycle, "Terminating") })
		if len(live) == 0 {
			return false, nil
		}
		m = region.Meddling{Action: region.MeddleKillInstance, Instance: live[s.N%len(live)].ID}
	case KindProtect, KindStandby:
		return p.instanceEvent(ctx, s, groups), nil
	case KindSpot:
		spot := slices.DeleteFunc(slices.Clone(groups), func(g placed) bool {
			return len(p.reg.World().SpotInstances(account, g.Region, g.Name)) == 0
		})
		if len(spot) == 0 {
			return false, nil
		}
		// The world taking instances away, as a kill is: judged only by
		// what ferry's calls do after it.
		m = region.Meddling{Action: region.MeddleInterruptSpot, Group: spot[s.N%len(spot)].Name, Count: s.D}
	case KindCapacity:
		d := int32(s.D)
		m = region.Meddling{Action: region.MeddleSetCapacity, Group: g.Name, Min: min(g.Min, d), Desired: d, Max: max(g.Max, d)}
	case KindDetach:
		lbs := append(slices.Clone(g.LoadBalancers), g.TargetGroups...)
		if len(lbs) == 0 {
			return false, nil
		}
		m = region.Meddling{Action: region.MeddleDetach, Group: g.Name, LoadBalancer: lbs[s.D%len(lbs)]}
	case KindSuspend:
		api := p.reg.World().Clients(account, g.Region).AutoScaling
		if _, err := api.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String(g.Name), ScalingProcesses: []string{s.P}}); err != nil {
			return false, nil
		}
		p.markMeddled(g.Name)
		return true, nil
	default:
		return false, fmt.Errorf("unknown step kind %q", s.Kind)
	}
	if _, err := p.reg.Meddle(ctx, m); err != nil {
		return false, nil
	}
	if s.Kind == KindCapacity {
		p.chk.Lower(g.Tags[naming.TagReleaseID], balancersOf(g, p.releaseOf(g.Tags[naming.TagReleaseID])), s.D)
	}
	if m.Group != "" {
		p.markMeddled(m.Group)
	}
	return true, nil
}

// instancesOf are the instances of groups that keep, with their groups'
// names, in the groups' order.
func instancesOf(groups []placed, keep func(sim.InstanceSnapshot) bool) []groupInstance {
	var out []groupInstance
	for _, g := range groups {
		for _, i := range g.Instances {
			if keep(i) {
				out = append(out, groupInstance{group: g, ID: i.ID})
			}
		}
	}
	return out
}

type groupInstance struct {
	group placed
	ID    string
}

// instanceEvent protects an instance from scale-in, or moves an
// in-service one to Standby, as the group's owner would
// (SetInstanceProtection, EnterStandby); done is false when there is
// none, or AWS refused.
func (p *player) instanceEvent(ctx context.Context, s Step, groups []placed) (done bool) {
	if s.Kind == KindProtect {
		live := instancesOf(groups, func(i sim.InstanceSnapshot) bool { return !strings.HasPrefix(i.Lifecycle, "Terminating") })
		if len(live) == 0 {
			return false
		}
		gi := live[s.N%len(live)]
		api := p.reg.World().Clients(account, gi.group.Region).AutoScaling
		if _, err := api.SetInstanceProtection(ctx, &autoscaling.SetInstanceProtectionInput{AutoScalingGroupName: aws.String(gi.group.Name), InstanceIds: []string{gi.ID}, ProtectedFromScaleIn: aws.Bool(true)}); err != nil {
			return false
		}
		p.markMeddled(gi.group.Name)
		return true
	}
	inService := instancesOf(groups, func(i sim.InstanceSnapshot) bool { return i.Lifecycle == "InService" })
	if len(inService) == 0 {
		return false
	}
	gi := inService[s.N%len(inService)]
	standby, ok := p.reg.World().Clients(account, gi.group.Region).AutoScaling.(interface {
		EnterStandby(context.Context, *autoscaling.EnterStandbyInput, ...func(*autoscaling.Options)) (*autoscaling.EnterStandbyOutput, error)
	})
	if !ok {
		return false
	}
	if _, err := standby.EnterStandby(ctx, &autoscaling.EnterStandbyInput{AutoScalingGroupName: aws.String(gi.group.Name), InstanceIds: []string{gi.ID}, ShouldDecrementDesiredCapacity: aws.Bool(s.D == 1)}); err != nil {
		return false
	}
	p.markMeddled(gi.group.Name)
	if s.D == 1 {
		lbs := balancersOf(gi.group, p.releaseOf(gi.group.Tags[naming.TagReleaseID]))
		p.chk.Lower(gi.group.Tags[naming.TagReleaseID], lbs, int(gi.group.Desired)-1)
	}
	return true
}

// releaseOf is the release the harness submitted with id (nil: none).
func (p *player) releaseOf(id string) *release.Release {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.succeeded {
		if r.ReleaseID == id {
			return r
		}
	}
	for _, r := range p.subs {
		if r.ReleaseID == id {
			return r
		}
	}
	return nil
}

// balancersOf are the load balancers and target groups group g serves
// in: those it is attached to, and those its service names in rel, the
// release it was made for (the world may have detached it from one, which
// a rollback attaches it back to, at the capacity the world left it).
func balancersOf(g placed, rel *release.Release) []string {
	var out []string
	add := func(names []string) {
		for _, lb := range names {
			if !slices.Contains(out, Where(g.Region, lb)) {
				out = append(out, Where(g.Region, lb))
			}
		}
	}
	add(g.LoadBalancers)
	add(g.TargetGroups)
	if svc := serviceOf(rel, g.Tags[naming.TagServiceName]); svc != nil {
		add(svc.ELBs)
		add(svc.TargetGroups)
	}
	return out
}

// serviceOf is rel's service called name (nil: rel is nil, or has none).
func serviceOf(rel *release.Release, name string) *release.Service {
	if rel == nil {
		return nil
	}
	return rel.Services[name]
}

func (p *player) markMeddled(group string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.meddled[group] = true
}

// launchActions are the calls an operator makes on a pending launching
// lifecycle action (Auto Scaling API Reference, CompleteLifecycleAction
// and RecordLifecycleActionHeartbeat).
type launchActions interface {
	CompleteLifecycleAction(context.Context, *autoscaling.CompleteLifecycleActionInput, ...func(*autoscaling.Options)) (*autoscaling.CompleteLifecycleActionOutput, error)
	RecordLifecycleActionHeartbeat(context.Context, *autoscaling.RecordLifecycleActionHeartbeatInput, ...func(*autoscaling.Options)) (*autoscaling.RecordLifecycleActionHeartbeatOutput, error)
}

var _ launchActions = (*sim.AutoScaling)(nil)

// launchAction makes a KindLaunchAction step: an operator (the world's
// owner) completes the launching action of the N-th instance of ferry's
// groups waiting in Pending:Wait, with CONTINUE or ABANDON, or records a
// heartbeat for it; by its token (as the hook's notification carries it)
// when D is 1. With none waiting, or AWS refusing, it does nothing; an
// action taken counts as a world event.
func (p *player) launchAction(ctx context.Context, s Step) {
	waiting := instancesOf(ferryGroups(p.reg.World().Snapshot()), func(i sim.InstanceSnapshot) bool { return i.Lifecycle == "Pending:Wait" })
	if len(waiting) == 0 {
		return
	}
	gi := waiting[s.N%len(waiting)]
	api, ok := p.reg.World().Clients(account, gi.group.Region).AutoScaling.(launchActions)
	if !ok {
		return
	}
	group, hook, id := aws.String(gi.group.Name), aws.String(launchHook), aws.String(gi.ID)
	var token *string
	if s.D == 1 {
		t, pending := p.reg.World().LaunchActionToken(account, gi.group.Region, gi.ID, launchHook)
		if !pending {
			return
		}
		id, token = nil, aws.String(t)
	}
	var err error
	if s.P == ActionHeartbeat {
		_, err = api.RecordLifecycleActionHeartbeat(ctx, &autoscaling.RecordLifecycleActionHeartbeatInput{AutoScalingGroupName: group, LifecycleHookName: hook, InstanceId: id, LifecycleActionToken: token})
	} else {
		_, err = api.CompleteLifecycleAction(ctx, &autoscaling.CompleteLifecycleActionInput{AutoScalingGroupName: group, LifecycleHookName: hook, InstanceId: id, LifecycleActionToken: token, LifecycleActionResult: aws.String(s.P)})
	}
	if err != nil {
		return
	}
	p.mu.Lock()
	p.events++
	p.mu.Unlock()
}
