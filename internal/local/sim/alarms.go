package sim

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/ferryhq/ferry/internal/naming/tags"
)

// alarmEvaluation is how often the simulation evaluates an alarm whose
// period is a minute or more, and how often an alarm in ALARM invokes its
// Auto Scaling actions: CloudWatch's user guide says alarms invoke actions
// only when they change state, "The exception is for alarms with Auto
// Scaling actions. For Auto Scaling actions, the alarm continues to invoke
// the action once per minute that the alarm remains in the new state."
const alarmEvaluation = time.Minute

// alarmState is the part of an alarm that changes as it is evaluated.
type alarmState struct {
	value  cwtypes.StateValue
	reason string
	since  time.Time // when value last changed
	// breaching is when the condition started to hold without a break
	// (zero while it does not).
	breaching time.Time
	gen       int // evaluation chain; a PutMetricAlarm starts a new one
}

// scheduleAlarm (re)starts a's evaluation chain at t. The caller holds
// w.mu.
func (r *region) scheduleAlarm(a *alarm, t time.Time) {
	a.state.gen++
	gen := a.state.gen
	step := alarmEvaluation
	if p := time.Duration(deref(a.input.Period)) * time.Second; p > 0 && p < step {
		step = p
	}
	var next func(at time.Time)
	next = func(at time.Time) {
		if r.alarms[deref(a.input.AlarmName)] != a || a.state.gen != gen {
			return
		}
		r.evaluate(a, at)
		r.w.at(at.Add(step), next)
	}
	r.w.at(t.Add(step), next)
}

// evaluate brings an alarm's state up to t and, while it is in ALARM,
// invokes its actions that are scaling policies of the region's groups.
// The metric the simulation knows is AWS/EC2 CPUUtilization of an Auto
// Scaling group (dimension AutoScalingGroupName): the instances in service
// report their image's cpu_percent. Any other metric, and a group without
// an instance in service, has no data (INSUFFICIENT_DATA). The condition
// must hold for EvaluationPeriods whole periods before the alarm goes to
// ALARM.
func (r *region) evaluate(a *alarm, t time.Time) {
	in := a.input
	value, ok := r.metric(a, t)
	set := func(v cwtypes.StateValue, reason string) {
		if a.state.value != v {
			a.state.value, a.state.reason, a.state.since = v, reason, t
		}
	}
	switch {
	case !ok:
		a.state.breaching = time.Time{}
		set(cwtypes.StateValueInsufficientData, "Insufficient Data: no datapoints were received for the period.")
	case !breaches(in.ComparisonOperator, value, deref(in.Threshold)):
		a.state.breaching = time.Time{}
		set(cwtypes.StateValueOk, fmt.Sprintf("Threshold Crossed: the datapoint [%.1f] was not %s the threshold (%.1f).", value, in.ComparisonOperator, deref(in.Threshold)))
	default:
		if a.state.breaching.IsZero() {
			a.state.breaching = t
		}
		need := time.Duration(deref(in.Period)) * time.Second * time.Duration(max(deref(in.EvaluationPeriods), 1))
		if t.Sub(a.state.breaching) >= need {
			set(cwtypes.StateValueAlarm, fmt.Sprintf("Threshold Crossed: %d datapoints were %s the threshold (%.1f); the most recent: [%.1f].",
				max(deref(in.EvaluationPeriods), 1), in.ComparisonOperator, deref(in.Threshold), value))
		}
	}
	if a.state.value != cwtypes.StateValueAlarm || (in.ActionsEnabled != nil && !*in.ActionsEnabled) {
		return
	}
	for _, arn := range in.AlarmActions {
		if g, p := r.policyByARN(arn); p != nil {
			r.executePolicy(g, p, a, t)
		}
	}
}

// metric is the value an alarm's metric has at t, and whether it has one.
func (r *region) metric(a *alarm, t time.Time) (float64, bool) {
	switch in := a.input; {
	case deref(in.Namespace) == imageNamespace && deref(in.MetricName) == clockMetric:
		return t.Sub(r.w.born).Minutes(), true
	case deref(in.Namespace) == imageNamespace:
		return r.imageInService(a, t)
	}
	return r.groupCPU(a, t)
}

// groupCPU is the AWS/EC2 CPUUtilization of the Auto Scaling group an
// alarm names (dimension AutoScalingGroupName) at t, by the alarm's
// statistic over its instances in service; none for any other metric, or
// a group without an instance in service.
func (r *region) groupCPU(a *alarm, t time.Time) (float64, bool) {
	in := a.input
	if deref(in.Namespace) != "AWS/EC2" || deref(in.MetricName) != "CPUUtilization" || len(in.Dimensions) != 1 ||
		deref(in.Dimensions[0].Name) != "AutoScalingGroupName" {
		return 0, false
	}
	g := r.groups[deref(in.Dimensions[0].Value)]
	if g == nil {
		return 0, false
	}
	var values []float64
	for _, i := range g.instances {
		if i.lifecycle(t) == "InService" {
			values = append(values, i.cpu)
		}
	}
	if len(values) == 0 {
		return 0, false
	}
	sum, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
	for _, v := range values {
		sum, lo, hi = sum+v, min(lo, v), max(hi, v)
	}
	switch in.Statistic {
	case cwtypes.StatisticMaximum:
		return hi, true
	case cwtypes.StatisticMinimum:
		return lo, true
	case cwtypes.StatisticSum:
		return sum, true
	case cwtypes.StatisticSampleCount:
		return float64(len(values)), true
	}
	return sum / float64(len(values)), true
}

// The metric of a world file's alarm (AlarmSpec): how many instances
// launched from an image are in service, by ImageId.
const (
	imageNamespace = "ferry/sim"
	imageMetric    = "InServiceInstances"
	imageDimension = "ImageId"
	// clockMetric is the metric of a world file's alarm at a time
	// (AlarmSpec.AtMinutes): the minutes since the world started.
	clockMetric = "WorldMinutes"
)

// imageInService is the metric of a world file's alarm at t: the
// instances of the region launched from its image that are in service.
func (r *region) imageInService(a *alarm, t time.Time) (float64, bool) {
	if len(a.input.Dimensions) != 1 || deref(a.input.Dimensions[0].Name) != imageDimension {
		return 0, false
	}
	n := 0
	for _, g := range r.groups {
		for _, i := range g.instances {
			if i.imageID == deref(a.input.Dimensions[0].Value) && i.lifecycle(t) == "InService" {
				n++
			}
		}
	}
	return float64(n), true
}

// addAlarm creates the alarm a world file describes: in ALARM once an
// instance launched from its image has been in service for its minutes,
// OK otherwise; or in ALARM from its time on.
func (r *region) addAlarm(s AlarmSpec) {
	if s.AtMinutes > 0 {
		r.setAlarm(&cloudwatch.PutMetricAlarmInput{
			AlarmName: aws.String(s.Name), Namespace: aws.String(imageNamespace), MetricName: aws.String(clockMetric),
			Statistic: cwtypes.StatisticMaximum, Period: aws.Int32(10), EvaluationPeriods: aws.Int32(1),
			Threshold: aws.Float64(float64(s.AtMinutes)), ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanOrEqualToThreshold,
			AlarmDescription: aws.String(fmt.Sprintf("an incident %d minutes after the world started (a world file's alarm)", s.AtMinutes)),
			Tags:             tags.CloudWatch(s.Tags),
		})
		return
	}
	image := s.Image
	for id, a := range r.amis {
		if a.name == s.Image {
			image = id
		}
	}
	r.setAlarm(&cloudwatch.PutMetricAlarmInput{
		AlarmName: aws.String(s.Name), Namespace: aws.String(imageNamespace), MetricName: aws.String(imageMetric),
		Dimensions: []cwtypes.Dimension{{Name: aws.String(imageDimension), Value: aws.String(image)}},
		Statistic:  cwtypes.StatisticMaximum, Period: aws.Int32(60), EvaluationPeriods: aws.Int32(int32(max(s.Minutes, 1))),
		Threshold: aws.Float64(0), ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanThreshold,
		AlarmDescription: aws.String("errors of the instances of " + s.Image + " once they serve (a world file's alarm)"),
		Tags:             tags.CloudWatch(s.Tags),
	})
}

func breaches(op cwtypes.ComparisonOperator, v, threshold float64) bool {
	switch op {
	case cwtypes.ComparisonOperatorGreaterThanThreshold:
		return v > threshold
	case cwtypes.ComparisonOperatorGreaterThanOrEqualToThreshold:
		return v >= threshold
	case cwtypes.ComparisonOperatorLessThanThreshold:
		return v < threshold
	case cwtypes.ComparisonOperatorLessThanOrEqualToThreshold:
		return v <= threshold
	}
	return false
}

// policyByARN finds a scaling policy of the region's groups.
func (r *region) policyByARN(arn string) (*group, *policy) {
	if !strings.Contains(arn, ":scalingPolicy:") {
		return nil, nil
	}
	for _, n := range slices.Sorted(maps.Keys(r.groups)) {
		g := r.groups[n]
		for _, p := range g.policies {
			if p.arn == arn {
				return g, p
			}
		}
	}
	return nil, nil
}

// executePolicy runs a simple scaling policy an alarm invoked: nothing
// while the group's AlarmNotification process is suspended, or within the
// cooldown (the policy's, else the group's default of 300 s) after the
// group's last scaling activity; else the desired capacity changes by the
// adjustment, bounded by the group's minimum and maximum.
func (r *region) executePolicy(g *group, p *policy, a *alarm, t time.Time) {
	if g.deleting || g.suspended[ProcessAlarmNotification] {
		return
	}
	cooldown := 300 * time.Second
	if c := p.input.Cooldown; c != nil {
		cooldown = time.Duration(*c) * time.Second
	}
	if !g.lastScaling.IsZero() && t.Before(g.lastScaling.Add(cooldown)) {
		return
	}
	adj := deref(p.input.ScalingAdjustment)
	desired := g.desired
	switch deref(p.input.AdjustmentType) {
	case "ExactCapacity":
		desired = adj
	case "PercentChangeInCapacity":
		desired = g.desired + int32(math.Round(float64(g.desired)*float64(adj)/100))
	default:
		desired = g.desired + adj
	}
	desired = max(g.min, min(g.max, desired))
	if desired == g.desired {
		return
	}
	why := fmt.Sprintf("At %s a monitor alarm %s in state ALARM triggered policy %s changing the desired capacity from %d to %d.  ",
		stamp(t), deref(a.input.AlarmName), p.name, g.desired, desired)
	r.setDesired(g, desired, t, why)
}
