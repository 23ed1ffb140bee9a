package deployer

import (
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/health"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/tuning"
)

// checkScene is a release of n services whose new groups each have
// inService instances in service, and their previous reports.
func checkScene(n int, inService func(i int) int, prev func(i int) execution.ServiceHealth) (*execution.State, []string, []string, map[string]asgtypes.AutoScalingGroup, map[string]execution.ServiceHealth) {
	spent := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC) // the checks before spent the Describe bucket: the least budget
	st := &execution.State{ProjectName: "p", ConfigName: "c", ReleaseID: "r1", Health: &execution.Health{Checks: 3, ReadsRefill: &spent}}
	tags := []asgtypes.TagDescription{
		{Key: aws.String(naming.TagProjectName), Value: aws.String("p")}, {Key: aws.String(naming.TagConfigName), Value: aws.String("c")},
		{Key: aws.String(naming.TagDeployWith), Value: aws.String(naming.DeployWithValue)}, {Key: aws.String(naming.TagReleaseID), Value: aws.String("r1")},
	}
	var services, names []string
	groups, caps := map[string]asgtypes.AutoScalingGroup{}, map[string]execution.ServiceHealth{}
	for i := range n {
		svc := fmt.Sprintf("svc%02d", i)
		name := naming.GroupName("p", "c", svc, "r1")
		services, names = append(services, svc), append(names, name)
		g := asgtypes.AutoScalingGroup{AutoScalingGroupName: aws.String(name), Tags: tags}
		var ids []string
		for k := range inService(i) {
			id := fmt.Sprintf("i-%03d%03d", i, k)
			ids = append(ids, id)
			g.Instances = append(g.Instances, asgtypes.Instance{InstanceId: aws.String(id), LifecycleState: asgtypes.LifecycleStateInService})
		}
		groups[name] = g
		p := prev(i)
		if p.HealthySince != nil {
			p.Instances = health.Digest(ids)
		}
		caps[svc] = p
	}
	return st, services, names, groups, caps
}

// servedByTGs names k target groups for each of services.
func servedByTGs(services []string, k func(i int) int) namedSet {
	named := namedSet{}
	for i, svc := range services {
		var sb servedBy
		for j := range k(i) {
			name := fmt.Sprintf("%s-tg%d", svc, j)
			sb.tgs = append(sb.tgs, balancerRef{name: name, arn: "arn:" + name})
		}
		named[svc] = sb
	}
	return named
}

// TestToAskBudget: with more load balancer reads to make than
// tuning.BalancerReadsPerCheck, a check makes that many: those at their
// target first (to confirm them), then those nearest it; the others'
// counts are carried on (held). A check of every balancer (the bake, the
// swap's gate) asks them all.
func TestToAskBudget(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 10, 0, 0, time.UTC)
	long := now.Add(-2 * time.Minute)
	n := tuning.BalancerReadsPerCheck + 10
	st, services, names, groups, caps := checkScene(n, func(i int) int { return 2 + i%3 }, func(i int) execution.ServiceHealth {
		if i == n-1 { // at its target, window over: to confirm
			return execution.ServiceHealth{Healthy: 4, Target: 4, StableSeconds: 60, HealthySince: &long}
		}
		return execution.ServiceHealth{Target: 4, StableSeconds: 60}
	})
	named := servedByTGs(services, func(int) int { return 1 })
	ask, held := toAsk(st, services, names, groups, caps, named, now, balancersUnsettled)
	for _, svc := range services {
		assert.NotEqual(t, ask[svc], held[svc], svc)
	}
	assert.Equal(t, tuning.BalancerReadsPerCheck, readsOf(named, ask))
	assert.True(t, ask[services[n-1]], "the service to confirm first")
	for i, svc := range services[:n-1] {
		if 2+i%3 == 4 {
			assert.True(t, ask[svc], "%s: all its target in service", svc)
		}
	}
	ask, _ = toAsk(st, services, names, groups, caps, named, now, balancersAll)
	for _, svc := range services {
		assert.True(t, ask[svc], svc)
	}
}

// TestReadBudget: a check reads more load balancers than
// tuning.BalancerReadsPerCheck, up to tuning.BalancerReadBurst, only once
// a target was reached (before, a read seldom finds one) and as far as
// the checks' own reads before left the account's Describe bucket
// (Elastic Load Balancing User Guide, "Request throttling": 40 tokens,
// refilled at 10 a second) that full by now; beside k other deploys on
// their way (Health.Underway), whose checks read the same bucket, its
// (k+1)-th of the burst at most, never fewer than
// tuning.BalancerReadsShared; what it reads sets when the bucket is full
// again.
func TestReadBudget(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 10, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	reached := map[string]execution.ServiceHealth{"api": {Healthy: 3, Target: 3}, "web": {Healthy: 1, Target: 3}}
	short := map[string]execution.ServiceHealth{"api": {Healthy: 2, Target: 3}, "web": {Healthy: 1, Target: 3}}
	tests := []struct {
		name   string
		health *execution.Health
		want   int
	}{
		{"first check", nil, tuning.BalancerReadsPerCheck},
		{"no target reached yet: the steady budget", &execution.Health{Checks: 2, Services: short}, tuning.BalancerReadsPerCheck},
		{"a target reached, no reads yet", &execution.Health{Checks: 2, Services: reached}, tuning.BalancerReadBurst},
		{"refilled already", &execution.Health{ReadsRefill: at(-time.Second), Services: reached}, tuning.BalancerReadBurst},
		{"a second's refill owed", &execution.Health{ReadsRefill: at(time.Second), Services: reached}, tuning.BalancerReadBurst - tuning.BalancerReadRate},
		{"the burst spent a moment ago: the steady budget", &execution.Health{ReadsRefill: at(3 * time.Second), Services: reached}, tuning.BalancerReadsPerCheck},
		{"far behind: the steady budget still", &execution.Health{ReadsRefill: at(time.Minute), Services: reached}, tuning.BalancerReadsPerCheck},
		{"beside one other deploy: its half of the burst", &execution.Health{Checks: 2, Services: reached, Underway: 1}, tuning.BalancerReadBurst / 2},
		{"beside two: its third, below the steady budget", &execution.Health{Checks: 2, Services: short, Underway: 2}, tuning.BalancerReadBurst / 3},
		{"beside 99: never fewer than the floor", &execution.Health{Checks: 2, Services: reached, Underway: 99}, tuning.BalancerReadsShared},
		{"beside one, the burst spent: the steady budget is less", &execution.Health{ReadsRefill: at(time.Minute), Services: reached, Underway: 1}, min(tuning.BalancerReadsPerCheck, tuning.BalancerReadBurst/2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, readBudget(&execution.State{Health: tt.health}, now))
		})
	}
	// 30 reads take 3 s to refill, from now or from when the bucket
	// would have been full.
	assert.Equal(t, now.Add(3*time.Second), *readsRefill(&execution.State{}, now, 30))
	assert.Equal(t, now.Add(5*time.Second), *readsRefill(&execution.State{Health: &execution.Health{ReadsRefill: at(2 * time.Second)}}, now, 30))
	assert.Equal(t, now.Add(2*time.Second), *readsRefill(&execution.State{Health: &execution.Health{ReadsRefill: at(-time.Hour)}}, now, 20))
}

// TestToAskBurst: when many services wait on their load balancers at
// once, a target was reached and the checks before left the Describe
// bucket full, a check reads tuning.BalancerReadBurst of them, not only
// tuning.BalancerReadsPerCheck: services reaching their targets together
// are seen sooner.
func TestToAskBurst(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 10, 0, 0, time.UTC)
	n := 2 * tuning.BalancerReadBurst
	st, services, names, groups, caps := checkScene(n, func(int) int { return 3 }, func(int) execution.ServiceHealth {
		return execution.ServiceHealth{Healthy: 1, Target: 3, StableSeconds: 60}
	})
	st.Health.Services = map[string]execution.ServiceHealth{services[0]: {Healthy: 3, Target: 3}, services[1]: {Healthy: 1, Target: 3}}
	named := servedByTGs(services, func(int) int { return 1 })
	ask, _ := toAsk(st, services, names, groups, caps, named, now, balancersUnsettled)
	assert.Equal(t, tuning.BalancerReadsPerCheck, readsOf(named, ask), "the bucket spent")
	refilled := now.Add(-time.Second)
	st.Health.ReadsRefill = &refilled
	ask, _ = toAsk(st, services, names, groups, caps, named, now, balancersUnsettled)
	assert.Equal(t, tuning.BalancerReadBurst, readsOf(named, ask), "the bucket full, a target reached")
}

// TestToAskBudgetInCalls: the budget is load balancer reads, not
// services: when more services end their windows at once than it holds
// (as happens when many services of many instances reach their targets
// together), a check confirms as many as their reads fit, and the next
// confirms the others; services naming two target groups cost two. A
// service at its target whose instances changed is judged on a fresh
// read whatever the budget.
func TestToAskBudgetInCalls(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 10, 0, 0, time.UTC)
	long := now.Add(-2 * time.Minute)
	n := 2 * tuning.BalancerReadsPerCheck
	st, services, names, groups, caps := checkScene(n, func(int) int { return 3 }, func(int) execution.ServiceHealth {
		return execution.ServiceHealth{Healthy: 3, Target: 3, StableSeconds: 60, HealthySince: &long}
	})
	for _, tc := range []struct {
		name string
		tgs  func(i int) int
	}{
		{"one target group each", func(int) int { return 1 }},
		{"two target groups each", func(int) int { return 2 }},
		{"one or two", func(i int) int { return 1 + i%2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			named := servedByTGs(services, tc.tgs)
			ask, held := toAsk(st, services, names, groups, caps, named, now, balancersUnsettled)
			assert.LessOrEqual(t, readsOf(named, ask), tuning.BalancerReadsPerCheck)
			assert.Greater(t, readsOf(named, ask), tuning.BalancerReadsPerCheck-2, "the budget is used")
			for _, svc := range services {
				assert.NotEqual(t, ask[svc], held[svc], svc)
			}
		})
	}

	named := servedByTGs(services, func(int) int { return 1 })
	changed := names[n-1]
	g := groups[changed]
	g.Instances = append(g.Instances[:0:0], g.Instances...)
	g.Instances[0].InstanceId = aws.String("i-replacement")
	groups[changed] = g
	ask, _ := toAsk(st, services, names, groups, caps, named, now, balancersUnsettled)
	assert.True(t, ask[services[n-1]], "an instance replaced at its target: asked")
	assert.Equal(t, tuning.BalancerReadsPerCheck, readsOf(named, ask), "its reads count within the budget")

	none := servedByTGs(services, func(i int) int { return (1 - i) * (tuning.BalancerReadsPerCheck + 5) })
	ask, _ = toAsk(st, services[:2], names[:2], groups, caps, none, now, balancersUnsettled)
	assert.True(t, ask[services[1]], "a service naming no load balancer costs no read: judged on its group, never carried")

	many := servedByTGs(services, func(int) int { return tuning.BalancerReadsPerCheck + 5 })
	ask, _ = toAsk(st, services[:2], names[:2], groups, caps, many, now, balancersUnsettled)
	assert.Equal(t, []bool{true, false}, []bool{ask[services[0]], ask[services[1]]},
		"a service naming more load balancers than the budget is still asked, one a check")
}

// TestHoldingConfirmed: a service confirmed stable (its load balancers
// asked once its window was over) is held afterwards, with the same
// instances; one whose window is over unconfirmed, or whose instances
// changed, is not.
func TestHoldingConfirmed(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 10, 0, 0, time.UTC)
	long := now.Add(-2 * time.Minute)
	for _, tc := range []struct {
		name      string
		confirmed bool
		changed   bool
		want      bool
	}{
		{"confirmed", true, false, true},
		{"window over, not confirmed", false, false, false},
		{"confirmed, an instance replaced", true, true, false},
	} {
		_, _, names, groups, caps := checkScene(1, func(int) int { return 2 }, func(int) execution.ServiceHealth {
			return execution.ServiceHealth{Healthy: 2, Target: 2, StableSeconds: 60, HealthySince: &long, Confirmed: tc.confirmed}
		})
		g := groups[names[0]]
		if tc.changed {
			g.Instances[0].InstanceId = aws.String("i-new")
		}
		assert.Equal(t, tc.want, holding(caps["svc00"], g, now), tc.name)
	}
}

// TestWindowConfirmsInTurns: with more windows to confirm than
// tuning.ConfirmPerCheck, the next check is at the end of the
// ConfirmPerCheck-th earliest, not the last; confirmed services count no
// more; with fewer, at the last window's end.
func TestWindowConfirmsInTurns(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 10, 0, 0, time.UTC)
	report := func(n int, confirmed int) map[string]execution.ServiceHealth {
		out := map[string]execution.ServiceHealth{}
		for i := range n {
			since := now.Add(-time.Duration(59-i) * time.Second) // window ends in i+1 s
			out[fmt.Sprintf("s%02d", i)] = execution.ServiceHealth{Healthy: 1, Target: 1, StableSeconds: 60, HealthySince: &since, Confirmed: i < confirmed}
		}
		return out
	}
	assert.Equal(t, 5*time.Second, window(report(5, 0), now))
	n := tuning.ConfirmPerCheck + 15
	assert.Equal(t, time.Duration(tuning.ConfirmPerCheck)*time.Second, window(report(n, 0), now))

	// Windows over: confirmed ones are done, unconfirmed ones due now.
	over := report(n, 0)
	for i := range tuning.ConfirmPerCheck {
		s := over[fmt.Sprintf("s%02d", i)]
		past := now.Add(-2 * time.Minute)
		s.HealthySince, s.Confirmed = &past, true
		over[fmt.Sprintf("s%02d", i)] = s
	}
	assert.Equal(t, time.Duration(n)*time.Second, window(over, now), "15 left: the last window's end")
	for i := range 6 {
		s := over[fmt.Sprintf("s%02d", i)]
		s.Confirmed = false
		over[fmt.Sprintf("s%02d", i)] = s
	}
	assert.Equal(t, time.Duration(2*tuning.ConfirmPerCheck-6)*time.Second, window(over, now), "those due now count")

	// More due than a check confirms (its load balancer reads left some
	// out): the next check as soon as the Describe refill allows, not the
	// schedule's pace.
	due := report(n, 0)
	for svc, s := range due {
		past := now.Add(-2 * time.Minute)
		s.HealthySince = &past
		due[svc] = s
	}
	assert.Equal(t, tuning.ImminentCheckInterval, window(due, now))
}

// TestCheckHealthyCountsItsReads: a health check carries on when the
// account's Describe bucket is full again after its own load balancer
// reads (Health.ReadsRefill), which the next check's budget reads.
func TestCheckHealthyCountsItsReads(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy...))
	h.clk.Advance(5 * time.Minute)
	before := len(h.world.CallLog())
	require.NoError(t, x.step(execution.TaskCheckHealthy))
	reads := 0
	for _, c := range h.world.CallLog()[before:] {
		if c.Op == "DescribeInstanceHealth" || c.Op == "DescribeTargetHealth" {
			reads++
		}
	}
	require.Positive(t, reads)
	require.NotNil(t, x.state.Health.ReadsRefill)
	assert.Equal(t, h.clk.Now().Add(time.Duration(reads)*time.Second/tuning.BalancerReadRate), *x.state.Health.ReadsRefill)
}

// TestJudgedStableOnlyOnAFreshCount: a release of two services, each in
// 16 target groups, whose windows end together: the check at their end
// has 32 target groups to read, more than its budget (tuning.BalancerReadBurst,
// within Elastic Load Balancing's Describe bucket: Elastic Load Balancing
// User Guide, "Request throttling"), so it asks one service's and carries
// the other's healthy count on from before its window ended. A service is
// stable only on a count read once its window was over (Confirmed), never
// on one carried from earlier in the window: CheckHealthy says healthy
// only when every service is confirmed, a check later, and never with a
// count carried on.
func TestJudgedStableOnlyOnAFreshCount(t *testing.T) {
	const perService = 16
	services := []string{"web", "worker"}
	h := newHarness(t, func(spec *sim.WorldSpec) {
		// Every instance boots and passes its health checks in the same
		// time: both services reach their targets at one check.
		spec.Defaults.Boot, spec.Defaults.Health = &sim.Range{Min: 90, Max: 90}, &sim.Range{Min: 30, Max: 30}
		addTargetGroups(&spec.Accounts[0].Regions[0], services, perService)
	})
	r := h.baseRelease()
	web := r.Services["web"]
	web.ELBs, web.TargetGroups = nil, nil
	r.Services["worker"] = &release.Service{InstanceType: "t2.nano", SecurityGroups: []string{"ec2::coinbase/deploy-test::development-worker"},
		Autoscaling: &release.Autoscaling{MinSize: 2, MaxSize: 4}}
	for _, svc := range services {
		for i := range perService {
			r.Services[svc].TargetGroups = append(r.Services[svc].TargetGroups, tgName(svc, i))
		}
	}
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy...))
	carried := false
	for checks := 1; ; checks++ {
		require.LessOrEqual(t, checks, 200, "not healthy: %+v", x.state.Health)
		h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
		require.NoError(t, x.step(execution.TaskCheckHealthy))
		now := h.clk.Now()
		for _, svc := range services {
			s := x.state.Health.Services[svc]
			if health.Stable(s, now) && !s.Confirmed {
				carried = true
			}
		}
		if x.state.Health.Healthy {
			for _, svc := range services {
				assert.True(t, x.state.Health.Services[svc].Confirmed, "%s judged stable: only on a count read once its window ended", svc)
			}
			break
		}
	}
	assert.True(t, carried, "a check at the windows' end carried one service's count on (the scene this test is for)")
}

// TestHeldWindowClosesOnWhatTheGroupShows: a check mid-window carries a
// service's healthy count on without asking its load balancers while its
// group has the same instances, none terminating (holding). Its group,
// described at every check, still shows each instance's lifecycle: one
// someone moves to Standby (EnterStandby with
// ShouldDecrementDesiredCapacity: no replacement, the same instance ids;
// it leaves its load balancers and is not InService: "Temporarily remove
// instances from your Auto Scaling group", Auto Scaling User Guide) takes
// the service below its target, so that check closes the window, and the
// release is healthy only a whole window after the instance is back.
func TestHeldWindowClosesOnWhatTheGroupShows(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	x := h.start(r)
	require.NoError(t, x.steps(upToDeploy...))
	name := naming.GroupName(project, config, "web", r.ReleaseID)
	for s := x.state.Health.Services["web"]; s.HealthySince == nil || s.Healthy < s.Launched; s = x.state.Health.Services["web"] {
		h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
		require.NoError(t, x.step(execution.TaskCheckHealthy))
	}
	s := x.state.Health.Services["web"]
	require.Positive(t, s.Target)
	c := h.world.Clients(account, region).AutoScaling.(*sim.AutoScaling)
	_, err := c.UpdateAutoScalingGroup(t.Context(), &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String(name), MinSize: aws.Int32(0)})
	require.NoError(t, err)
	var ids []string
	for _, i := range h.groups()[name].Instances {
		if i.Lifecycle == "InService" && len(ids) < s.Healthy-s.Target+1 {
			ids = append(ids, i.ID)
		}
	}
	_, err = c.EnterStandby(t.Context(), &autoscaling.EnterStandbyInput{AutoScalingGroupName: aws.String(name), InstanceIds: ids,
		ShouldDecrementDesiredCapacity: aws.Bool(true)})
	require.NoError(t, err)

	h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
	require.NoError(t, x.step(execution.TaskCheckHealthy))
	s = x.state.Health.Services["web"]
	assert.Less(t, s.Healthy, s.Target, "below its target: the group shows %d in Standby", len(ids))
	assert.Nil(t, s.HealthySince, "the window closed")

	_, err = c.ExitStandby(t.Context(), &autoscaling.ExitStandbyInput{AutoScalingGroupName: aws.String(name), InstanceIds: ids})
	require.NoError(t, err)
	back := h.clk.Now()
	_, err = x.untilHealthy(200)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, h.clk.Now().Sub(back), time.Duration(s.StableSeconds)*time.Second, "a whole window after the instances are back")
}

// TestChecksShareTheDescribeBucketBesideOthers: the health checks of
// deploys to one account and region read one Elastic Load Balancing
// Describe bucket (Elastic Load Balancing User Guide, "Request
// throttling": 40 tokens, refilled at 10 a second). A deploy that went
// alone reads every service's target groups at a check (its budget,
// tuning.BalancerReadsPerCheck and up); one that Deploy saw beside 29
// others on their way (their start markers) reads at most its thirtieth
// of tuning.BalancerReadBurst, never fewer than
// tuning.BalancerReadsShared, waits after a check that read for its
// thirtieth of the refill to bring them back (readsShareWait), counts
// them again at each check, and, once they have arrived, reads at its
// whole budget again. Either way it becomes healthy with every
// service confirmed stable on a fresh count.
func TestChecksShareTheDescribeBucketBesideOthers(t *testing.T) {
	const (
		perService = 3
		arrive     = 12 // the check before which the others arrive
	)
	services := []string{"api", "jobs", "web", "worker"}
	run := func(t *testing.T, others int) (most, quickest int, underway []int) {
		h := newHarness(t, func(spec *sim.WorldSpec) {
			spec.Defaults.Boot, spec.Defaults.Health = &sim.Range{Min: 90, Max: 90}, &sim.Range{Min: 30, Max: 30}
			rs := &spec.Accounts[0].Regions[0]
			for i, svc := range services[:2] { // web's and worker's are the harness's
				sg := "ec2::coinbase/deploy-test::development-" + svc
				rs.SecurityGroups = append(rs.SecurityGroups, sim.SecurityGroupSpec{ID: fmt.Sprintf("sg-00000000000ff%04d", i), Name: sg, VPCID: "vpc-0000000000000c001",
					Tags: map[string]string{"Name": sg, "ProjectName": project, "ConfigName": config, "ServiceName": svc}})
			}
			addTargetGroups(rs, services, perService)
		})
		r := h.baseRelease()
		web := r.Services["web"]
		web.ELBs, web.TargetGroups = nil, nil
		for _, svc := range services {
			if svc != "web" {
				r.Services[svc] = &release.Service{InstanceType: "t2.nano", SecurityGroups: []string{"ec2::coinbase/deploy-test::development-" + svc},
					Autoscaling: &release.Autoscaling{MinSize: 2, MaxSize: 4}}
			}
			for i := range perService {
				r.Services[svc].TargetGroups = append(r.Services[svc].TargetGroups, tgName(svc, i))
			}
		}
		x := h.start(r)
		markers := h.onTheirWay(account, others, h.clk.Now())
		require.NoError(t, x.steps(upToDeploy...))
		for checks := 1; !x.state.Health.Healthy; checks++ {
			require.LessOrEqual(t, checks, 200, "not healthy: %+v", x.state.Health)
			if checks == arrive {
				for _, key := range markers {
					_, err := h.s3.DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
					require.NoError(t, err)
				}
			}
			h.clk.Advance(time.Duration(x.state.Health.WaitSeconds) * time.Second)
			before := len(h.world.CallLog())
			require.NoError(t, x.step(execution.TaskCheckHealthy))
			reads := 0
			for _, c := range h.world.CallLog()[before:] {
				if c.Op == "DescribeTargetHealth" {
					reads++
				}
			}
			if checks < arrive {
				most = max(most, reads)
				if reads > 0 && (quickest == 0 || x.state.Health.WaitSeconds < quickest) {
					quickest = x.state.Health.WaitSeconds
				}
			}
			underway = append(underway, x.state.Health.Underway)
		}
		for _, svc := range services {
			assert.True(t, x.state.Health.Services[svc].Confirmed, "%s judged stable: only on a fresh count", svc)
		}
		return most, quickest, underway
	}
	alone, quickAlone, counted := run(t, 0)
	assert.Equal(t, len(services)*perService, alone, "alone: every service's target groups at a check")
	assert.Equal(t, make([]int, len(counted)), counted, "alone: none counted, nor listed")
	beside, quickBeside, counted := run(t, 29)
	assert.Positive(t, beside)
	assert.LessOrEqual(t, beside, max(tuning.BalancerReadsShared, tuning.BalancerReadBurst/30), "beside 29 others: its share")
	assert.Equal(t, 29, counted[0], "counted at each check")
	// After a check that read, the next waits for its thirtieth of the
	// refill to bring its reads back (a service's three: 9 s, jittered by
	// a fifth); alone, as soon as the pace allows.
	assert.Less(t, quickAlone, 7)
	assert.GreaterOrEqual(t, quickBeside, perService*30/tuning.BalancerReadRate*4/5)
	require.Greater(t, len(counted), arrive)
	assert.Equal(t, 0, counted[arrive-1], "counted none once they arrived")
}

// addTargetGroups gives each of services perService target groups of its
// own (tgName), routed by the harness's load balancer.
func addTargetGroups(rs *sim.RegionSpec, services []string, perService int) {
	for _, svc := range services {
		for i := range perService {
			rs.TargetGroups = append(rs.TargetGroups, sim.TargetGroupSpec{Name: tgName(svc, i), Port: 8000,
				LoadBalancers: []string{"coinbase-deploy-test-web-alb"},
				Tags:          map[string]string{naming.TagProjectName: project, naming.TagConfigName: config, naming.TagServiceName: svc}})
		}
	}
}

// tgName is the name of target group i of service svc (addTargetGroups).
func tgName(svc string, i int) string { return fmt.Sprintf("cdt-%s-tg%02d", svc, i) }
