package deployer

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/tuning"
)

// The wait between health checks: the schedule for the time since the
// execution started, no sooner than a predicted boot, on time for the
// stability window's end, never past the timeout, at least a second, and
// within the history for every timeout up to the longest.
func TestNextCheck(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	since := func(d time.Duration) *time.Time { at := start.Add(d); return &at }
	tests := []struct {
		name    string
		timeout int
		elapsed time.Duration
		checks  int
		ready   time.Duration
		report  map[string]execution.ServiceHealth
		min     int
		max     int
	}{
		{"first minutes", 600, time.Minute, 12, 0, nil, 4, 6},
		{"within the hour", 172800, 30 * time.Minute, 240, 0, nil, 8, 12},
		{"a long deploy", 172800, 10 * time.Hour, 800, 0, nil, 240, 360},
		{"no check before a boot can end", 600, 5 * time.Second, 0, 70 * time.Second, nil, 70, 70},
		{"the window's end", 600, 3 * time.Minute, 30, 0, map[string]execution.ServiceHealth{
			"web": {Healthy: 2, Target: 2, StableSeconds: 60, HealthySince: since(2*time.Minute + 10*time.Second)},
			"api": {Healthy: 1, Target: 1, StableSeconds: 60, HealthySince: since(2 * time.Minute)},
		}, 10, 10},
		{"a service below its target", 600, 3 * time.Minute, 30, 0, map[string]execution.ServiceHealth{
			"web": {Healthy: 1, Target: 2, StableSeconds: 60},
			"api": {Healthy: 1, Target: 1, StableSeconds: 60, HealthySince: since(2 * time.Minute)},
		}, 4, 6},
		{"the last service's target imminent: a check a second", 600, 3 * time.Minute, 30, 0, map[string]execution.ServiceHealth{
			"web": {Healthy: 1, Target: 2, InService: 2, StableSeconds: 60},
			"api": {Healthy: 1, Target: 1, StableSeconds: 60, HealthySince: since(2 * time.Minute)},
		}, 1, 1},
		{"many services' targets imminent: every two seconds", 600, 3 * time.Minute, 30, 0, imminent(tuning.FewImminent + 1), 2, 2},
		{"two of ten services' targets imminent: every two seconds", 600, 3 * time.Minute, 30, 0, reached(imminent(2), 8, start), 2, 2},
		{"the last of ten services' target imminent: a check a second", 600, 3 * time.Minute, 30, 0, reached(imminent(1), 9, start), 1, 1},
		{"the last five of fifty services' targets imminent: a check a second", 600, 3 * time.Minute, 30, 0, reached(imminent(tuning.FewImminent), 45, start), 1, 1},
		{"the last six of sixty services' targets imminent: every two seconds", 600, 3 * time.Minute, 30, 0, reached(imminent(tuning.FewImminent+1), 54, start), 2, 2},
		{"the one service's target imminent: every two seconds, its whole ramp", 600, 3 * time.Minute, 30, 0, map[string]execution.ServiceHealth{
			"web": {Healthy: 90, Target: 100, InService: 100, StableSeconds: 60},
		}, 2, 2},
		{"near the deadline", 600, 598 * time.Second, 110, 0, nil, 2, 2},
		{"past the deadline", 600, 700 * time.Second, 130, 0, nil, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Deployer{cfg: Config{HealthCheckInterval: tuning.HealthCheckInterval}, clock: clock.NewVirtual(start.Add(tt.elapsed))}
			st := &execution.State{Timeout: tt.timeout}
			req := execution.Request{Execution: execution.Context{ID: "exec", StartTime: start}}
			got := d.nextCheck(st, req, servingBehind(tt.report, 1), tt.checks, tt.ready, tt.report, false)
			assert.GreaterOrEqual(t, got, tt.min)
			assert.LessOrEqual(t, got, tt.max)
		})
	}
	for _, every := range []time.Duration{time.Second, tuning.HealthCheckInterval, 15 * time.Second} {
		d := &Deployer{cfg: Config{HealthCheckInterval: every}}
		for _, timeout := range []time.Duration{time.Minute, 10 * time.Minute, time.Hour, 6 * time.Hour, limits.MaxTimeout} {
			assert.LessOrEqual(t, d.schedule(timeout).MaxChecks(timeout), limits.MaxHealthChecks, "interval %v, timeout %v", every, timeout)
		}
	}
}

// The checks come a second apart at the tail of services that reach
// their targets together: once a check saw at least as many reach theirs
// as are still below, and those below name few enough load balancers
// that a check a second reads them all within an account's Describe
// refill (Elastic Load Balancing's 10 a second); never for a whole ramp
// (more below than have reached theirs).
func TestFewAtTheTailOfServicesArrivingTogether(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		report   map[string]execution.ServiceHealth
		reachNow int // of the services at their targets, how many were below at the previous check
		lbs      int // load balancers each service names
		want     bool
	}{
		{"the last ten of fifty, forty reached theirs at this check", reached(imminent(10), 40, start), 40, 1, true},
		{"the last ten of fifty, ten reached theirs at this check", reached(imminent(10), 40, start), 10, 1, true},
		{"the last ten of fifty, nine reached theirs at this check", reached(imminent(10), 40, start), 9, 1, false},
		{"the last eleven of fifty: more reads than a second's refill", reached(imminent(11), 39, start), 39, 1, false},
		{"the last six of fifty naming two target groups each: twelve reads", reached(imminent(6), 44, start), 44, 2, false},
		{"the last five of fifty naming two target groups each", reached(imminent(5), 45, start), 45, 2, true},
		{"the last six of fifty, none reached theirs at this check", reached(imminent(6), 44, start), 0, 1, false},
		{"the last five of fifty, none reached theirs at this check: few anyway", reached(imminent(5), 45, start), 0, 1, true},
		{"six of ten below, four reached theirs at this check: a whole ramp", reached(imminent(6), 4, start), 4, 1, false},
		{"five of ten below, five reached theirs at this check", reached(imminent(5), 5, start), 5, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := map[string]execution.ServiceHealth{}
			for svc, s := range tt.report {
				prev[svc] = s
			}
			for i := range tt.reachNow {
				prev[fmt.Sprintf("done%02d", i)] = execution.ServiceHealth{Healthy: 0, Target: 1, InService: 1, StableSeconds: 60}
			}
			assert.Equal(t, tt.want, few(servingBehind(tt.report, tt.lbs), tt.report, prev))

			d := &Deployer{cfg: Config{HealthCheckInterval: tuning.HealthCheckInterval}, clock: clock.NewVirtual(start.Add(3 * time.Minute))}
			st := &execution.State{Timeout: 600, Health: &execution.Health{Checks: 30, Services: prev}}
			req := execution.Request{Execution: execution.Context{ID: "exec", StartTime: start}}
			want := 2
			if tt.want {
				want = 1
			}
			assert.Equal(t, want, d.nextCheck(st, req, servingBehind(tt.report, tt.lbs), 30, 0, tt.report, false), "the wait before the next check")
		})
	}
}

// servingBehind is a release of report's services, each naming lbs
// target groups.
func servingBehind(report map[string]execution.ServiceHealth, lbs int) *release.Release {
	r := &release.Release{Services: map[string]*release.Service{}}
	for svc := range report {
		s := &release.Service{}
		for i := range lbs {
			s.TargetGroups = append(s.TargetGroups, fmt.Sprintf("%s-tg%d", svc, i))
		}
		r.Services[svc] = s
	}
	return r
}

// imminent is a report of n services, each with its target in service
// and not yet healthy in its load balancers.
func imminent(n int) map[string]execution.ServiceHealth {
	report := map[string]execution.ServiceHealth{}
	for i := range n {
		report[fmt.Sprintf("svc%02d", i)] = execution.ServiceHealth{Healthy: 1, Target: 2, InService: 2, StableSeconds: 60}
	}
	return report
}

// reached adds n services to report, each at its target since two
// minutes after start.
func reached(report map[string]execution.ServiceHealth, n int, start time.Time) map[string]execution.ServiceHealth {
	since := start.Add(2 * time.Minute)
	for i := range n {
		report[fmt.Sprintf("done%02d", i)] = execution.ServiceHealth{Healthy: 1, Target: 1, InService: 1, StableSeconds: 60, HealthySince: &since}
	}
	return report
}

// The wait between bake checks: the interval, stretched for long bakes so
// a whole bake fits its share of Step Functions' history, never past the
// bake's end, at least a second.
func TestBakeWait(t *testing.T) {
	tests := []struct {
		name string
		bake int
		left time.Duration
		want int
	}{
		{"ten minutes", 600, 5 * time.Minute, 5},
		{"the longest", limits.MaxBakeSeconds, time.Hour, 346},
		{"near the end", 600, 2 * time.Second, 2},
		{"a fraction left", 600, 1500 * time.Millisecond, 2},
		{"nothing left", 600, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := bakeWait(tuning.HealthCheckInterval, tt.bake, tt.left)
			assert.Equal(t, tt.want, got)
			whole := bakeWait(tuning.HealthCheckInterval, tt.bake, time.Duration(tt.bake)*time.Second)
			assert.LessOrEqual(t, tt.bake, whole*limits.MaxBakeChecks, "checks over the whole bake")
		})
	}
}

// TestHistoryBudget: the longest execution ferry can run stays within
// Step Functions' history (limits.StepFunctionsHistoryEvents): every
// health check of the longest timeout, every check of the longest bake,
// and then either the longest retirement (a success) or the longest
// rollback and clean-up (a failure), each round of a wait loop recording
// limits.HistoryEventsPerRound events, with room for the tasks that run
// once and their retries.
func TestHistoryBudget(t *testing.T) {
	const once = 200 // the tasks that run once, each retried a few times
	rounds := func(bound, interval time.Duration) int { return int(bound / interval) }
	assert.LessOrEqual(t, tuning.RetireChecks.MaxChecks(tuning.RetireTimeout)+limits.MaxThrottledSteps, limits.MaxRetireSteps)
	assert.LessOrEqual(t, rounds(tuning.RollbackTimeout, tuning.RollbackCheckInterval), limits.MaxRollbackChecks)
	// A canary's steps each add a NextStep round to the health checks.
	checks := limits.MaxHealthChecks + limits.MaxRolloutSteps
	// ValidateResources and Deploy take limits.MaxThrottledSteps rounds
	// at most together when AWS throttles them, and so does a clean-up
	// (the retirement's are within limits.MaxRetireSteps).
	// Deploy's rounds paced by Auto Scaling's bucket add to those.
	deploy := limits.MaxThrottledSteps + limits.MaxPacedDeploySteps
	success := deploy + checks + limits.MaxBakeChecks + limits.MaxRetireSteps
	failure := deploy + checks + limits.MaxBakeChecks + limits.MaxRollbackChecks + rounds(tuning.RetireTimeout, tuning.RetireCheckInterval) + limits.MaxThrottledSteps
	for name, n := range map[string]int{"success": success, "failure": failure} {
		assert.LessOrEqual(t, n*limits.HistoryEventsPerRound+once, limits.StepFunctionsHistoryEvents, name)
	}
}

// TestBooting: the checks slow to tuning.BootCheckInterval only while a
// service below its target lacks instances in service and every service
// below its target is judged on load balancers (its target comes only
// after a check can see it imminent); a service without load balancers
// is healthy the moment it is in service, so it keeps the quick pace.
func TestBooting(t *testing.T) {
	r := &release.Release{Services: map[string]*release.Service{
		"web": {TargetGroups: []string{"web-tg"}}, "api": {ELBs: []string{"api-elb"}}, "worker": {},
	}}
	at := func(healthy, inService int) execution.ServiceHealth {
		return execution.ServiceHealth{Target: 2, Healthy: healthy, InService: inService}
	}
	tests := []struct {
		name   string
		report map[string]execution.ServiceHealth
		want   bool
	}{
		{"booting behind a target group", map[string]execution.ServiceHealth{"web": at(0, 1)}, true},
		{"booting behind a classic load balancer, the other at target", map[string]execution.ServiceHealth{"api": at(0, 0), "web": at(2, 2)}, true},
		{"in service, health checks pending: imminent", map[string]execution.ServiceHealth{"web": at(1, 2)}, false},
		{"a service without load balancers below target", map[string]execution.ServiceHealth{"web": at(0, 1), "worker": at(1, 1)}, false},
		{"a group not visible", map[string]execution.ServiceHealth{"web": {Target: 2, Missing: true}}, false},
		{"a service the release does not name", map[string]execution.ServiceHealth{"gone": at(0, 0)}, false},
		{"every service at target", map[string]execution.ServiceHealth{"web": at(2, 2), "worker": at(2, 2)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, booting(r, tt.report))
		})
	}
}

// TestThrottledPart: a retirement step AWS throttled part-way reports
// what it did and where the next starts; when it got some groups
// through it is progress, not counted against limits.MaxThrottledSteps
// (until tuning.RetireTimeout); one that got none through is counted;
// any other step is not throttledPart's.
func TestThrottledPart(t *testing.T) {
	throttled := &smithy.GenericAPIError{Code: "Throttling", Message: "Rate exceeded"}
	groups := []fleet.GroupState{{RetiringGroup: execution.RetiringGroup{Name: "a", Phase: execution.PhaseScalingIn}}, {RetiringGroup: execution.RetiringGroup{Name: "b", Phase: execution.PhaseDraining}}}
	tests := []struct {
		name    string
		ret     fleet.Retirement
		err     error
		elapsed time.Duration
		ok      bool
		counted int
	}{
		{"some groups through", fleet.Retirement{Groups: groups, Stopped: "b", Stepped: 1}, throttled, time.Minute, true, 3},
		{"none through", fleet.Retirement{Groups: groups, Stopped: "a"}, throttled, time.Minute, true, 4},
		{"some through, past the retirement's timeout", fleet.Retirement{Groups: groups, Stopped: "b", Stepped: 1}, throttled, tuning.RetireTimeout, true, 4},
		{"not stopped part-way", fleet.Retirement{Groups: groups}, throttled, time.Minute, false, 0},
		{"no error", fleet.Retirement{Groups: groups}, nil, time.Minute, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Deployer{clock: clock.NewVirtual(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)), log: slog.New(slog.DiscardHandler)}
			st := &execution.State{Retire: &execution.Retire{Throttled: 3}}
			w, ok := d.throttledPart(st, execution.Request{}, tt.ret, tt.err, tt.elapsed)
			require.Equal(t, tt.ok, ok)
			if !ok {
				return
			}
			assert.Equal(t, tt.counted, w.Throttled)
			assert.Equal(t, tt.ret.Stopped, w.From, "the next step starts where this one stopped")
			assert.Equal(t, tt.ret.State(), w.Groups)
			assert.Positive(t, w.WaitSeconds)
		})
	}
}
