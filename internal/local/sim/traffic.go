package sim

import (
	"time"
)

// requestsPerSecond is the traffic the simulation sends through each
// classic load balancer, and from each application load balancer to each
// of its target groups, while it has an instance to send it to: split
// evenly between the instances that pass its health check, each answering
// its image's share of them with an HTTP 5xx (AMISpec.ErrorPercent).
// While none passes, nothing reaches an instance: CloudWatch counts such
// requests as the load balancer's own 5xx (HTTPCode_ELB_5XX_Count), not
// the targets'.
const requestsPerSecond = 10

// traffic is the requests one load balancer sent its instances (a target
// group's from one load balancer) and the 5xx they answered, per minute:
// the datapoints of its RequestCount and its target 5xx count, as
// CloudWatch publishes them (Sum over each minute).
type traffic struct {
	// since is up to when it is counted (zero before the first look).
	since   time.Time
	minutes map[int64]*datapoint
}

// datapoint is one minute of traffic.
type datapoint struct{ requests, errors float64 }

// serving is who a load balancer sends traffic to at a moment: n
// instances passing its health check, whose 5xx shares, in basis points,
// add up to bp (an integer sum: the same in any order).
type serving struct{ n, bp int }

// errors is the share of requests answered with a 5xx: the instances'
// mean.
func (s serving) errors() float64 {
	if s.n == 0 {
		return 0
	}
	return float64(s.bp) / float64(s.n) / 10000
}

// observe counts the traffic from since up to now, as at(t) says who
// serves at t. Between two looks nothing but time changes who is
// registered (the world looks before every event and call), and time
// only moves an instance through its health checks and its draining, so
// an interval whose two ends see the same is counted at that; one whose
// ends differ is split, down to a second, each second at its end's.
func (t *traffic) observe(now time.Time, at func(time.Time) serving) {
	if t.since.IsZero() || !now.After(t.since) {
		t.since = later(t.since, now)
		return
	}
	t.span(t.since, now, at(t.since), at(now), at)
	t.since = now
}

// span counts [from, to), whose ends see sFrom and sTo.
func (t *traffic) span(from, to time.Time, sFrom, sTo serving, at func(time.Time) serving) {
	if sFrom == sTo || to.Sub(from) <= time.Second {
		if sTo.n > 0 {
			t.count(from, to, sTo.errors())
		}
		return
	}
	mid := from.Add(to.Sub(from) / 2).Truncate(time.Second)
	if !mid.After(from) {
		mid = from.Add(time.Second)
	}
	sMid := at(mid)
	t.span(from, mid, sFrom, sMid, at)
	t.span(mid, to, sMid, sTo, at)
}

// count adds [from, to), errors answered with a 5xx, to the minutes it
// spans.
func (t *traffic) count(from, to time.Time, errors float64) {
	if t.minutes == nil {
		t.minutes = map[int64]*datapoint{}
	}
	for from.Before(to) {
		minute := from.Truncate(time.Minute)
		end := minute.Add(time.Minute)
		if to.Before(end) {
			end = to
		}
		d := t.minutes[minute.Unix()/60]
		if d == nil {
			d = &datapoint{}
			t.minutes[minute.Unix()/60] = d
		}
		n := end.Sub(from).Seconds() * requestsPerSecond
		d.requests += n
		d.errors += n * errors
		from = end
	}
}

// sum is the traffic of the whole minutes in [start, end), in periods of
// period from start: each period with requests, oldest first.
func (t *traffic) sum(start, end time.Time, period time.Duration) (times []time.Time, points []datapoint) {
	for p := start; p.Before(end); p = p.Add(period) {
		var d datapoint
		for m := p.Truncate(time.Minute); m.Before(p.Add(period)) && m.Before(end); m = m.Add(time.Minute) {
			if x := t.minutes[m.Unix()/60]; x != nil {
				d.requests += x.requests
				d.errors += x.errors
			}
		}
		if d.requests > 0 {
			times, points = append(times, p), append(points, d)
		}
	}
	return times, points
}
