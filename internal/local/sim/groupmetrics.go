package sim

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
)

// The Auto Scaling group metrics the simulation publishes, each with the
// dimension AutoScalingGroupName and nothing else: EC2's own
// CPUUtilization (the image's cpu_percent) and NetworkOut (its
// network_out_bytes a minute), every five minutes under basic monitoring
// and every minute with detailed monitoring (Amazon EC2 User Guide,
// "Manage detailed monitoring for your EC2 instances"), and the custom
// metrics of the image (AMISpec.Metrics), every minute, from the moment
// an instance boots until it terminates.
const (
	namespaceEC2       = "AWS/EC2"
	metricCPU          = "CPUUtilization"
	metricNetworkOut   = "NetworkOut"
	dimensionGroup     = "AutoScalingGroupName"
	basicMonitoring    = 5 * time.Minute
	detailedMonitoring = time.Minute
)

// groupDimension is the group a metric names when its one dimension is
// AutoScalingGroupName.
func groupDimension(m *cwtypes.Metric) (string, bool) {
	if len(m.Dimensions) != 1 || deref(m.Dimensions[0].Name) != dimensionGroup {
		return "", false
	}
	return deref(m.Dimensions[0].Value), true
}

// groupSeries is the statistic stat of metric m over the instances ever
// launched in group g, per period from start (whole minutes) to end,
// oldest first: each period that has a datapoint has one, the statistic
// of every datapoint the group's instances published in it (Average,
// Sum, Minimum, Maximum, SampleCount, or a percentile pNN).
func (r *region) groupSeries(g string, m *cwtypes.Metric, stat string, start, end time.Time, period time.Duration) ([]time.Time, []float64) {
	var times []time.Time
	var values []float64
	for p := start; p.Before(end); p = p.Add(period) {
		to := p.Add(period)
		if end.Before(to) {
			to = end
		}
		var points []float64
		for _, i := range r.history {
			if i.g.name == g {
				points = append(points, r.published(i, m, p, to)...)
			}
		}
		if v, ok := statistic(stat, points); ok {
			times, values = append(times, p), append(values, v)
		}
	}
	return times, values
}

// published are the datapoints instance i published of metric m in
// [from, to): one at each whole minute (of five for EC2's metrics under
// basic monitoring) from its boot until it terminates, its image's value
// spread by up to MetricJitter either way.
func (r *region) published(i *instance, m *cwtypes.Metric, from, to time.Time) []float64 {
	a := r.amis[i.imageID]
	if a == nil {
		return nil
	}
	base, every, ok := a.metricValue(deref(m.Namespace), deref(m.MetricName), i.cpu)
	if !ok {
		return nil
	}
	if deref(m.Namespace) == namespaceEC2 && !i.detailed {
		every = basicMonitoring
	}
	var out []float64
	for t := from.Truncate(every); t.Before(to); t = t.Add(every) {
		if t.Before(from) || t.Before(i.bootAt) || (!i.terminating.IsZero() && !t.Before(i.terminating)) {
			continue
		}
		u := float64(seed(i.id, deref(m.MetricName)+"@"+strconv.FormatInt(t.Unix(), 10))%2001)/1000 - 1 // -1 to 1
		v := base * (1 + MetricJitter*u)
		if deref(m.MetricName) == metricNetworkOut && deref(m.Namespace) == namespaceEC2 {
			v *= every.Minutes() // bytes in the datapoint's interval
		}
		out = append(out, v)
	}
	return out
}

// metricValue is the value a's instances publish of metric namespace/name
// (cpu being the instance's CPUUtilization) and how often; false for one
// they do not publish.
func (a *ami) metricValue(namespace, name string, cpu float64) (float64, time.Duration, bool) {
	if namespace == namespaceEC2 {
		switch name {
		case metricCPU:
			return cpu, detailedMonitoring, true
		case metricNetworkOut:
			return a.networkOut, detailedMonitoring, true
		}
		return 0, 0, false
	}
	v, ok := a.metrics[[2]string{namespace, name}]
	return v, time.Minute, ok
}

// statistic is stat of points; false without points or for a statistic
// CloudWatch does not have.
func statistic(stat string, points []float64) (float64, bool) {
	if len(points) == 0 {
		return 0, false
	}
	var sum float64
	for _, v := range points {
		sum += v
	}
	switch stat {
	case "Average":
		return sum / float64(len(points)), true
	case "Sum":
		return sum, true
	case "Minimum":
		return slices.Min(points), true
	case "Maximum":
		return slices.Max(points), true
	case "SampleCount":
		return float64(len(points)), true
	}
	q, err := strconv.ParseFloat(strings.TrimPrefix(stat, "p"), 64)
	if !strings.HasPrefix(stat, "p") || err != nil || q < 0 || q > 100 {
		return 0, false
	}
	sorted := slices.Sorted(slices.Values(points))
	k := max(0, int(math.Ceil(q/100*float64(len(sorted))))-1) // nearest rank
	return sorted[k], true
}
