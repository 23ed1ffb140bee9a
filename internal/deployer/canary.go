package deployer

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/ferryhq/ferry/internal/capacity"
	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/health"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// stagesOf are the stages of service svc's new group (capacity.Stages):
// one per step of its rollout, or one (all at once) without a rollout.
// desired is the service's desired capacity as Deploy planned it, from
// which the plan is computed again the same way.
func stagesOf(r *release.Release, svc string, desired int) ([]capacity.Stage, error) {
	plan, err := planOf(r, svc, &desired)
	if err != nil {
		return nil, err
	}
	var steps []capacity.Step
	if ro := r.ServiceRollout(svc); ro != nil {
		for _, s := range ro.Steps {
			steps = append(steps, capacity.Step{N: s.N, Percent: s.Percent})
		}
	}
	return plan.Stages(bounds(r.Services[svc]), steps), nil
}

// firstStage is service svc's first report: its plan, and the first
// stage of its rollout (the whole plan without one).
func firstStage(r *release.Release, svc string, plan capacity.Plan) (execution.ServiceHealth, capacity.Stage, error) {
	stages, err := stagesOf(r, svc, plan.Desired)
	if err != nil {
		return execution.ServiceHealth{}, capacity.Stage{}, err
	}
	s := execution.ServiceHealth{Target: stages[0].Healthy, Desired: plan.Desired, Launch: plan.Launch}
	if len(stages) > 1 {
		s.Step, s.Steps, s.StepDesired = 1, len(stages), stages[0].Launch
	}
	s.StableSeconds = stepWindow(r, svc, s)
	return s, stages[0], nil
}

// stageOf is the stage service svc's report s is at: its step's, or the
// last (the whole group) without a rollout. A step out of range (a report
// that does not match the release) is the last.
func stageOf(r *release.Release, svc string, s execution.ServiceHealth) (capacity.Stage, error) {
	stages, err := stagesOf(r, svc, s.Desired)
	if err != nil {
		return capacity.Stage{}, err
	}
	if s.Step >= 1 && s.Step < len(stages) {
		return stages[s.Step-1], nil
	}
	return stages[len(stages)-1], nil
}

// stepping reports whether a service's report s has a step of its canary
// left.
func stepping(s execution.ServiceHealth) bool { return s.Step >= 1 && s.Step < s.Steps }

// stepWindow is how long service svc must hold its target at its report
// s's step: its stability window, or its rollout's step wait when longer
// and a step is left.
func stepWindow(r *release.Release, svc string, s execution.ServiceHealth) int {
	window := r.ServiceStableSeconds(svc)
	if ro := r.ServiceRollout(svc); ro != nil && stepping(s) {
		window = max(window, ro.StepWaitSeconds)
	}
	return window
}

// judge is what a health report at now means for the state machine:
// healthy when every service is stable at its whole capacity; next when
// every service is stable at its step and a canary has a step left. A
// service is stable here only once Confirmed: on a healthy count this
// check read after its window ended (or carried on from one so read),
// never on one carried from before (a check whose load balancer reads
// left it out, see toAsk), which a later check reads.
func judge(report map[string]execution.ServiceHealth, now time.Time) (healthy, next bool) {
	if !health.AllStable(report, now) || slices.ContainsFunc(slices.Collect(maps.Values(report)), unconfirmed) {
		return false, false
	}
	for _, s := range report {
		if stepping(s) {
			return false, true
		}
	}
	return true, false
}

// unconfirmed says a service's report s is not Confirmed.
func unconfirmed(s execution.ServiceHealth) bool { return !s.Confirmed }

// nextStep is the NextStep task, taken when every service is stable at
// its step (CheckHealthy's report says next_step). It fails with a
// *failure.HaltError when a halt marker was written after the execution
// started. Each service of a canary with a step left goes to its next
// one: its new group's minimum size and desired capacity are set to the
// stage's (fleet.Release.Step), its target becomes the stage's, and its
// stability window starts again. The previous groups serve alongside,
// untouched, until the last step is stable. Idempotent: each step sets
// absolute sizes, so a retry with the same State sets the same. A
// refusal is a *failure.DeployError, before the point of no return.
//
// It returns the Health, with the wait before the next check.
func (d *Deployer) nextStep(ctx context.Context, req execution.Request) (any, error) {
	st, err := d.verify(ctx, req)
	if err != nil {
		return nil, err
	}
	if st.Health == nil {
		return nil, &failure.InternalError{Msg: "task " + req.Task + ": the state has no health report"}
	}
	if err := d.checkHalt(ctx, st, req); err != nil {
		return nil, err
	}
	r, c, err := d.loadAndConnect(ctx, st, false)
	if err != nil {
		return nil, err
	}
	rel := d.fleetRelease(c, st, req)
	h := &execution.Health{Checks: st.Health.Checks, Services: map[string]execution.ServiceHealth{}, Underway: st.Health.Underway}
	var steps []events.Event
	for _, svc := range r.ServiceNames() {
		s, ok := st.Health.Services[svc]
		if !ok {
			return nil, &failure.InternalError{Msg: "task " + req.Task + ": the health report has no service " + svc}
		}
		if stepping(s) {
			stages, err := stagesOf(r, svc, s.Desired)
			if err != nil {
				return nil, err
			}
			if s.Step >= len(stages) {
				return nil, &failure.InternalError{Msg: fmt.Sprintf("task %s: service %s is at step %d of %d, but its rollout has %d", req.Task, svc, s.Step, s.Steps, len(stages))}
			}
			next := stages[s.Step]
			if err := rel.Step(ctx, naming.GroupName(r.ProjectName, r.ConfigName, svc, r.ReleaseID), next.MinSize, next.Launch); err != nil {
				return nil, err
			}
			s.Step++
			s.Target, s.StepDesired, s.HealthySince = next.Healthy, next.Launch, nil
			s.StableSeconds = stepWindow(r, svc, s)
			d.log.Info("canary step", "release_id", st.ReleaseID, "service", svc, "step", s.Step, "steps", s.Steps, "desired", next.Launch, "healthy_target", next.Healthy)
			steps = append(steps, events.Event{Kind: events.CanaryStep, Body: events.CanaryStepDetail{
				Head:    d.head(st, req, events.CanaryStep, svc, strconv.Itoa(s.Step)),
				Service: svc, Step: s.Step, Steps: s.Steps, Desired: next.Launch}})
		}
		h.Services[svc] = s
	}
	d.announce(ctx, c, st, steps...)
	h.WaitSeconds = d.nextCheck(st, req, r, h.Checks, 0, h.Services, false)
	return h, nil
}
