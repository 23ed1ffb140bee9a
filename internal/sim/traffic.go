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

// observe counts the traffic from since up to now, a second at a time:
// each second at the error shares of the instances serving at its end
// (shares; none: no request reaches an instance). Between two looks
// nothing but time changes the world (checkServing looks after every
// event and call), so what serves at a moment is a function of it.
func (t *traffic) observe(now time.Time, shares func(at time.Time) []float64) {
	if t.since.IsZero() {
		t.since = now
		return
	}
	for at := t.since; at.Before(now); {
		end := at.Add(time.Second)
		if now.Before(end) {
			end = now
		}
		if s := shares(end); len(s) > 0 {
			share := 0.0
			for _, e := range s {
				share += e / float64(len(s))
			}
			t.count(at, end, share)
		}
		at = end
	}
	t.since = now
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
