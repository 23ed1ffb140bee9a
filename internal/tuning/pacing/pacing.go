package pacing

import (
	"hash/fnv"
	"math"
	"strconv"
	"time"
)

// Pace is one stretch of a Schedule: checks every Every until Until after
// the execution started (0: for ever).
type Pace struct {
	Until time.Duration
	Every time.Duration
}

// Schedule is when an execution checks its release's health again.
type Schedule struct {
	// Paces are in order of Until; the last one's Until is 0.
	Paces []Pace
	// Jitter is the share by which a wait may be shortened or
	// lengthened (0.2: from 80% to 120% of the interval).
	Jitter float64
	// Stable is the shortest wait while every service holds its target
	// and its stability window runs.
	Stable time.Duration
	// Soon is the wait while a target is imminent (Situation.Imminent);
	// Sooner while those below theirs are few (Situation.Few).
	Soon, Sooner time.Duration
	// Boot is the shortest wait while a target cannot be reached before
	// a check sees it imminent (Situation.Booting).
	Boot time.Duration
}

// Situation is what a check knows when it picks the wait before the
// next one.
type Situation struct {
	// Elapsed is the time since the execution started.
	Elapsed time.Duration
	// Left is the time until the release's timeout (<= 0: no timeout).
	Left time.Duration
	// Checks are the health checks the execution made so far.
	Checks int
	// Ready, when positive, is how long until an instance launching now
	// can first be healthy: no check is useful before.
	Ready time.Duration
	// Window, when positive, says every service holds its target, and
	// is how long until the last stability window ends.
	Window time.Duration
	// Imminent says every service below its target waits only for its
	// load balancers' health checks: it may reach it at any moment.
	Imminent bool
	// Few says, with Imminent, that the services below their targets are
	// few: a check reads few load balancers, and may come Sooner.
	Few bool
	// Booting says a service below its target still lacks instances in
	// service, and every service below its target is judged on load
	// balancers: its target is reached only after a check can see it
	// imminent (its instances in service, then past their health
	// checks), so no check before one sees that adds latency.
	Booting bool
	// Seed picks the jitter: the execution's id.
	Seed string
}

// Every is the schedule's interval at elapsed.
func (s Schedule) Every(elapsed time.Duration) time.Duration {
	for _, p := range s.Paces {
		if p.Until == 0 || elapsed < p.Until {
			return p.Every
		}
	}
	return s.Paces[len(s.Paces)-1].Every
}

// Checks is how many checks the schedule makes, without jitter, in the
// first d of an execution.
func (s Schedule) Checks(d time.Duration) float64 {
	var n float64
	from := time.Duration(0)
	for _, p := range s.Paces {
		to := d
		if p.Until != 0 && p.Until < d {
			to = p.Until
		}
		if to > from {
			n += float64(to-from) / float64(p.Every)
		}
		if p.Until == 0 || p.Until >= d {
			break
		}
		from = p.Until
	}
	return n
}

// MaxChecks is the most checks a timeout can take: every wait as short
// as the jitter makes it, and one more for the window's end.
func (s Schedule) MaxChecks(timeout time.Duration) int {
	return int(math.Ceil(s.Checks(timeout)/(1-s.Jitter))) + 1
}

// Next is the wait before the next check, in whole seconds (Step
// Functions' Wait takes an integer), at least one: the jittered interval
// to the nearest second, a window's end or a prediction rounded up (a
// check a moment early would be wasted).
func (s Schedule) Next(x Situation) int {
	wait := time.Duration(float64(s.Every(x.Elapsed)) * s.factor(x.Seed, x.Checks))
	round := math.Round
	// A wait shorter than the schedule's is taken while the checks made
	// so far leave room for it: as many as the schedule makes by then
	// with every wait at its shortest.
	room := func(d time.Duration) bool { return float64(x.Checks+1) <= s.Checks(x.Elapsed+d)/(1-s.Jitter) }
	switch {
	case x.Window > 0:
		wait = max(wait, s.Stable)
		if x.Window < wait && room(x.Window) {
			wait, round = x.Window, math.Ceil
		}
	case x.Booting:
		wait = max(wait, time.Duration(float64(s.Boot)*s.factor(x.Seed, x.Checks)))
	case x.Imminent && s.Soon > 0:
		every := s.Soon
		if x.Few && s.Sooner > 0 {
			every = s.Sooner
		}
		if soon := time.Duration(float64(every) * s.factor(x.Seed, x.Checks)); soon < wait && room(soon) {
			wait = soon
		}
	}
	if x.Ready > wait {
		wait, round = x.Ready, math.Ceil
	}
	if x.Left > 0 && x.Left < wait {
		wait, round = x.Left, math.Ceil
	}
	return max(1, int(round(wait.Seconds())))
}

// factor is the jitter of check n of the execution seed: from 1-Jitter
// to 1+Jitter, the same for the same seed and n.
func (s Schedule) factor(seed string, n int) float64 {
	if s.Jitter <= 0 {
		return 1
	}
	h := fnv.New64a()
	h.Write([]byte(seed))
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(n)))
	u := float64(h.Sum64()>>11) / (1 << 53) // uniform in [0, 1)
	return 1 - s.Jitter + 2*s.Jitter*u
}

// Fit returns s, its intervals stretched when a timeout would take more
// than limit checks (MaxChecks) otherwise: a schedule made quicker than
// the default still fits the history.
func (s Schedule) Fit(timeout time.Duration, limit int) Schedule {
	n := s.MaxChecks(timeout)
	if n <= limit || limit < 2 {
		return s
	}
	k := float64(n) / float64(limit-1)
	out := s
	out.Paces = make([]Pace, len(s.Paces))
	for i, p := range s.Paces {
		out.Paces[i] = Pace{Until: p.Until, Every: time.Duration(math.Ceil(float64(p.Every) * k))}
	}
	return out
}
