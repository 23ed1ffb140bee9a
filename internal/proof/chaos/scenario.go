package chaos

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
)

// Step kinds: releases, operator actions, world events and call faults.
const (
	// Releases and operator actions (ferry's client would make them).
	KindDeploy    = "deploy"    // a release: Variant over the reference's next release
	KindRollback  = "rollback"  // ferry rollback: the release served before the current one, again
	KindHeal      = "heal"      // the current release deployed again
	KindDestroy   = "destroy"   // ferry destroy
	KindHalt      = "halt"      // ferry halt: a halt marker
	KindUnlock    = "unlock"    // ferry unlock, refused while the holder runs
	KindReconcile = "reconcile" // a reconcile pass, as the schedule starts one
	// Promotions (Options.Promotions): ferry pipeline start of R through
	// qa then production, production gated by a soak of D seconds, the qa
	// gate alarm, and an approval when P is "approval"; ferry pipeline
	// approve and halt of the promotion that runs.
	KindPromote     = "promote"
	KindApprove     = "approve"
	KindHaltPromote = "halt-promotion"

	// World events (the world's owner, or AWS).
	KindKill     = "kill"     // terminate the N-th instance of ferry's groups; Auto Scaling replaces it
	KindCapacity = "capacity" // set the N-th group's desired (and min) to D
	KindDetach   = "detach"   // detach the N-th group from its D-th load balancer or target group
	KindSuspend  = "suspend"  // suspend process P of the N-th group
	KindZone     = "zone"     // impair zone P for D seconds: launches there fail
	KindFail     = "fail"     // the next D launches fail
	KindProtect  = "protect"  // protect the N-th instance of ferry's groups from scale-in
	KindStandby  = "standby"  // move the N-th in-service instance of ferry's groups to Standby (D 1: decrementing the desired capacity)
	KindSpot     = "spot"     // EC2 interrupts D Spot instances of the N-th of ferry's groups that has any (notice and recommendation at once)
	KindAlarm    = "alarm"    // the qa gate alarm in ALARM for D seconds (Options.Promotions)
	// KindLaunchAction: an operator acts on the N-th instance of ferry's
	// groups waiting in Pending:Wait on a launching hook: completes its
	// action with P (CONTINUE, ABANDON) or records a heartbeat (P
	// "heartbeat"); by the action's token when D is 1, else by instance
	// id (Options.LaunchHooks).
	KindLaunchAction = "launch-action"

	// Call faults, on ferry's calls only.
	KindFault = "fault" // the N-th call of operation P by ferry's roles fails with E
	KindHide  = "hide"  // new groups hidden from their first D lookups
)

// World is what a scenario changes of the reference world.
type World struct {
	// CPU is the instances' CPU percent (0: the world's): 5 makes ferry's
	// scale-down alarms fire, 90 its scale-up ones.
	CPU int `json:"cpu,omitempty"`
	// Drain is the classic load balancers' connection draining, seconds
	// (0: the world's; ferry refuses a load balancer without draining).
	Drain int `json:"drain,omitempty"`
}

// Variant is a release: the reference's next release with changes.
type Variant struct {
	// Behavior is the new instances' behaviour (sim.Behavior; "": healthy).
	Behavior string `json:"b,omitempty"`
	// Bake is bake_seconds.
	Bake int `json:"bake,omitempty"`
	// Canary makes the web service a canary (steps 1, then 100%).
	Canary bool `json:"canary,omitempty"`
	// Without removes the service (and says so in remove).
	Without string `json:"without,omitempty"`
	// Min and Max change web's autoscaling bounds (0: as they are).
	Min int `json:"min,omitempty"`
	Max int `json:"max,omitempty"`
	// Version is written into the user data (a changed service).
	Version int `json:"v,omitempty"`
	// Drop drops web's classic load balancer (Options.Moves).
	Drop bool `json:"drop,omitempty"`
	// Move moves the config to the other region (us-east-1, us-west-2: a
	// copy of it), with move_from naming where it is (Options.Moves).
	Move bool `json:"move,omitempty"`
	// Spot makes web a mixed Spot fleet (two instance types, all Spot
	// above no On-Demand base), with capacity rebalance unless
	// NoRebalance.
	Spot        bool `json:"spot,omitempty"`
	NoRebalance bool `json:"norb,omitempty"`
	// Build is the build the release runs: the reference's (""), one
	// 60% slower (BuildSlower) or one that errs three times as often
	// (BuildErrs), each an image of the world.
	Build string `json:"build,omitempty"`
	// Analysis judges the release by a canary analysis of its build's
	// latency and errors (analysed).
	Analysis bool `json:"an,omitempty"`
	// Hook gives the release an autoscaling:EC2_INSTANCE_LAUNCHING hook
	// of Heartbeat seconds (ferry's hooks CONTINUE when it passes): its
	// instances complete the action at the end of their boot (HookComplete),
	// abandon it (HookAbandon), or nobody does (HookWait); "": no hook.
	Hook      string `json:"hook,omitempty"`
	Heartbeat int    `json:"hb,omitempty"`
}

// What a release's instances do with their launching hook's action
// (Variant.Hook).
const (
	HookComplete = "complete"
	HookAbandon  = "abandon"
	HookWait     = "wait"
)

// hookKinds are the values of Variant.Hook, none first.
var hookKinds = []string{"", HookComplete, HookAbandon, HookWait}

// What an operator does with a pending launching action (KindLaunchAction's
// P).
const (
	ActionContinue  = "CONTINUE"
	ActionAbandon   = "ABANDON"
	ActionHeartbeat = "heartbeat"
)

// Step is one thing that happens at a moment of the scenario.
type Step struct {
	// At is the moment, in seconds after the scenario starts.
	At   int    `json:"at"`
	Kind string `json:"k"`
	// N, D, P and E are the kind's arguments (see the kinds).
	N int    `json:"n,omitempty"`
	D int    `json:"d,omitempty"`
	P string `json:"p,omitempty"`
	E string `json:"e,omitempty"`
	// R is a deploy's release.
	R *Variant `json:"r,omitempty"`
}

func (s Step) String() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Scenario is one run: its seed, world and steps in time order.
type Scenario struct {
	Seed  uint64 `json:"seed"`
	World World  `json:"world"`
	Steps []Step `json:"steps"`
}

// moves says whether a release of sc moves the config (its world then
// has the region it moves to).
func (sc Scenario) moves() bool {
	return slices.ContainsFunc(sc.Steps, func(s Step) bool { return s.R != nil && s.R.Move })
}

// Options switch parts of the generator.
type Options struct {
	// Moves adds releases that drop a load balancer and releases that
	// move the config to another region.
	Moves bool
	// Promotions adds promotions of a release through the pipeline qa ->
	// production (qa a copy of production's resources), operator
	// approvals and halts of them, and the qa gate alarm flipping.
	Promotions bool
	// LaunchHooks gives the releases of some seeds a launching lifecycle
	// hook, and adds operators completing or heartbeating its pending
	// actions.
	LaunchHooks bool
}

// Fault kinds of KindFault.
const (
	FaultThrottle = "throttle"
	FaultInternal = "5xx"
)

// mutatingOps are the operations of ferry's a fault may hit.
var mutatingOps = []string{
	"CreateAutoScalingGroup", "UpdateAutoScalingGroup", "DeleteAutoScalingGroup", "CreateLaunchTemplate",
	"DeleteLaunchTemplate", "PutMetricAlarm", "DeleteAlarms", "PutScalingPolicy", "AttachLoadBalancers",
	"AttachLoadBalancerTargetGroups", "DetachLoadBalancers", "DetachLoadBalancerTargetGroups", "SuspendProcesses",
	"ResumeProcesses", "DescribeAutoScalingGroups", "DescribeInstanceHealth", "DescribeTargetHealth",
	"GetMetricData", "PutEvents",
}

var behaviors = []string{"", "", "", "", "crash-loop", "crash-after-healthy", "slow-boot", "never-healthy", "worker"}

// Generate makes the scenario of seed: the same seed, the same scenario.
func Generate(seed uint64, opts Options) Scenario {
	rng := rand.New(rand.NewPCG(seed, 0x6368616f73))
	sc := Scenario{Seed: seed}
	sc.World.CPU = []int{0, 0, 5, 90}[rng.IntN(4)]
	sc.World.Drain = []int{0, 20}[rng.IntN(2)]
	at := 0
	n := 2 + rng.IntN(7)
	for range n {
		at += rng.IntN(90)
		sc.Steps = append(sc.Steps, step(rng, at, opts))
	}
	// Every scenario deploys at least once, early.
	if !slices.ContainsFunc(sc.Steps, func(s Step) bool { return s.Kind == KindDeploy }) {
		sc.Steps = append([]Step{{At: 0, Kind: KindDeploy, R: variant(rng, opts)}}, sc.Steps...)
	}
	if opts.LaunchHooks {
		launchHooks(&sc)
	}
	return sc
}

// hookStream is the stream of a seed's launching hooks (launchHooks): its
// own, so the rest of a seed's scenario is the one it draws without them.
const hookStream = 0x686f6f6b

// launchHooks draws, for about one seed in three, a launching hook into
// most of its releases (deploys and promotions), and for about half of
// those an operator acting on a pending action some time after the
// release starts.
func launchHooks(sc *Scenario) {
	rng := rand.New(rand.NewPCG(sc.Seed, hookStream))
	if rng.IntN(3) != 0 {
		return
	}
	var actions []Step
	for _, s := range sc.Steps {
		if s.R == nil || rng.IntN(4) == 0 {
			continue
		}
		s.R.Hook = []string{HookComplete, HookComplete, HookWait, HookAbandon}[rng.IntN(4)]
		s.R.Heartbeat = []int{30, 60, 120, 240}[rng.IntN(4)]
		if rng.IntN(2) == 0 {
			actions = append(actions, Step{At: s.At + 10 + rng.IntN(240), Kind: KindLaunchAction, N: rng.IntN(8), D: rng.IntN(2),
				P: []string{ActionContinue, ActionContinue, ActionAbandon, ActionHeartbeat}[rng.IntN(4)]})
		}
	}
	sc.Steps = append(sc.Steps, actions...)
	slices.SortStableFunc(sc.Steps, func(a, b Step) int { return a.At - b.At })
}

// hooks says whether a release of sc declares a launching hook.
func (sc Scenario) hooks() bool {
	return slices.ContainsFunc(sc.Steps, func(s Step) bool { return s.R != nil && s.R.Hook != "" })
}

// step draws one step at at: a release or an operator action about half
// the time, else a world event or a call fault (worldStep).
func step(rng *rand.Rand, at int, opts Options) Step {
	s := Step{At: at}
	if opts.Promotions && promotionStep(rng, &s) {
		return s
	}
	switch x := rng.IntN(100); {
	case x < 30:
		s.Kind, s.R = KindDeploy, variant(rng, opts)
	case x < 34:
		s.Kind = KindRollback
	case x < 37:
		s.Kind = KindHeal
	case x < 39:
		s.Kind = KindDestroy
	case x < 45:
		s.Kind = KindHalt
	case x < 48:
		s.Kind = KindUnlock
	case x < 51:
		s.Kind = KindReconcile
	default:
		worldStep(rng, x, &s)
	}
	return s
}

// worldStep draws the world event or call fault of s, x (51 to 99) being
// step's draw.
func worldStep(rng *rand.Rand, x int, s *Step) {
	switch {
	case x < 63:
		s.Kind, s.N = KindKill, rng.IntN(16)
	case x < 68:
		s.Kind, s.N, s.D = KindCapacity, rng.IntN(8), rng.IntN(5)
	case x < 73:
		s.Kind, s.N, s.D = KindDetach, rng.IntN(8), rng.IntN(2)
	case x < 77:
		s.Kind, s.N, s.P = KindSuspend, rng.IntN(8), []string{"Launch", "Terminate", "AZRebalance", "AlarmNotification", "ReplaceUnhealthy"}[rng.IntN(5)]
	case x < 81:
		s.Kind, s.P, s.D = KindZone, []string{"us-east-1a", "us-east-1b"}[rng.IntN(2)], 30+rng.IntN(300)
	case x < 84:
		s.Kind, s.D = KindFail, 1+rng.IntN(4)
	case x < 92:
		s.Kind, s.N, s.D = KindSpot, rng.IntN(8), 1+rng.IntN(2)
	case x < 94:
		s.Kind, s.P, s.N, s.E = KindFault, mutatingOps[rng.IntN(len(mutatingOps))], 1+rng.IntN(4), []string{FaultThrottle, FaultInternal}[rng.IntN(2)]
	case x < 96:
		s.Kind, s.N = KindProtect, rng.IntN(16)
	case x < 98:
		s.Kind, s.N, s.D = KindStandby, rng.IntN(16), rng.IntN(2)
	default:
		s.Kind, s.D = KindHide, 1+rng.IntN(3)
	}
}

// promotionStep draws, about one step in six, a promotion, an approval,
// a halt of the promotion or the gate alarm flipping into s; false: none.
func promotionStep(rng *rand.Rand, s *Step) bool {
	switch x := rng.IntN(100); {
	case x < 7:
		s.Kind, s.D = KindPromote, []int{0, 60, 300}[rng.IntN(3)]
		s.R = &Variant{Behavior: behaviors[rng.IntN(len(behaviors))], Version: rng.IntN(3), Canary: rng.IntN(3) == 0}
		if rng.IntN(2) == 0 {
			s.R.Bake = []int{30, 60}[rng.IntN(2)]
		}
		if rng.IntN(2) == 0 {
			s.P = GateApproval
		}
	case x < 11:
		s.Kind = KindApprove
	case x < 13:
		s.Kind = KindHaltPromote
	case x < 16:
		s.Kind, s.D = KindAlarm, 60+rng.IntN(600)
	default:
		return false
	}
	return true
}

// GateApproval is a promote step's P when production needs an approval.
const GateApproval = "approval"

// promotes says whether sc starts a promotion (its world then has qa).
func (sc Scenario) promotes() bool {
	return slices.ContainsFunc(sc.Steps, func(s Step) bool { return s.Kind == KindPromote })
}

// variant draws a release.
func variant(rng *rand.Rand, opts Options) *Variant {
	v := &Variant{Behavior: behaviors[rng.IntN(len(behaviors))], Version: rng.IntN(3)}
	if rng.IntN(2) == 0 {
		v.Bake = []int{30, 60, 120}[rng.IntN(3)]
	}
	v.Canary = rng.IntN(3) == 0
	if rng.IntN(8) == 0 {
		v.Without = "worker"
	}
	if rng.IntN(4) == 0 {
		v.Min = 1 + rng.IntN(3)
		v.Max = v.Min + rng.IntN(3)
	}
	if opts.Moves {
		v.Drop = rng.IntN(5) == 0
		v.Move = rng.IntN(4) == 0
	}
	v.Spot = rng.IntN(3) == 0
	v.NoRebalance = v.Spot && rng.IntN(3) == 0
	v.Build = builds[rng.IntN(len(builds))]
	v.Analysis = rng.IntN(3) == 0
	return v
}

// Encode is the scenario as one argument: its JSON, deflated, in
// URL-safe base64 (Decode reads it back).
func (sc Scenario) Encode() string {
	b, _ := json.Marshal(sc) // a Scenario always encodes
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	_, _ = w.Write(b)
	_ = w.Close()
	return base64.RawURLEncoding.EncodeToString(buf.Bytes())
}

// Decode reads a scenario Encode wrote, or the scenario's JSON itself.
func Decode(s string) (Scenario, error) {
	var sc Scenario
	raw := []byte(s)
	if !strings.HasPrefix(strings.TrimSpace(s), "{") {
		b, err := base64.RawURLEncoding.DecodeString(strings.TrimSpace(s))
		if err != nil {
			return sc, fmt.Errorf("chaos: the scenario is neither JSON nor what Encode writes: %w", err)
		}
		if raw, err = io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(b)), 1<<20)); err != nil {
			return sc, fmt.Errorf("chaos: the scenario does not inflate: %w", err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return sc, fmt.Errorf("chaos: the scenario is not valid: %w", err)
	}
	for i, s := range sc.Steps {
		switch {
		case !slices.Contains(kinds, s.Kind):
			return sc, fmt.Errorf("chaos: the scenario's step %d has kind %q (there are %s)", i, s.Kind, strings.Join(kinds, ", "))
		case s.At < 0 || i > 0 && s.At < sc.Steps[i-1].At:
			return sc, fmt.Errorf("chaos: the scenario's step %d is at %d s, before the step ahead of it or the start", i, s.At)
		case s.R != nil && !slices.Contains(hookKinds, s.R.Hook):
			return sc, fmt.Errorf("chaos: the scenario's step %d has hook %q (there are %s)", i, s.R.Hook, strings.Join(hookKinds[1:], ", "))
		}
	}
	return sc, nil
}

// kinds are every step kind.
var kinds = []string{KindDeploy, KindRollback, KindHeal, KindDestroy, KindHalt, KindUnlock, KindReconcile,
	KindPromote, KindApprove, KindHaltPromote,
	KindKill, KindCapacity, KindDetach, KindSuspend, KindZone, KindFail, KindProtect, KindStandby, KindSpot, KindAlarm, KindLaunchAction, KindFault, KindHide}
