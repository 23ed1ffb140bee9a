package region

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"

	"github.com/ferryhq/ferry/internal/local/sameorigin"
	"github.com/ferryhq/ferry/internal/local/sim"
)

// Meddling actions: changes made to the simulated AWS from outside
// ferry, as a person at the console would make them, so tests and demos
// can make drift (ferry local world ACTION ...).
const (
	// MeddleDeleteGroup deletes a group and its instances (ForceDelete).
	MeddleDeleteGroup = "delete-group"
	// MeddleSetCapacity sets a group's min, desired and max.
	MeddleSetCapacity = "set-capacity"
	// MeddleKillInstance terminates an instance without lowering its
	// group's desired capacity: Auto Scaling launches a replacement.
	MeddleKillInstance = "kill-instance"
	// MeddleDetach detaches a classic load balancer or a target group
	// (by name) from a group.
	MeddleDetach = "detach"
	// MeddleInterruptSpot is EC2 taking back Count Spot instances of a
	// group (sim.World.InterruptSpot): a rebalance recommendation, the
	// two-minute notice, then the termination.
	MeddleInterruptSpot = "interrupt-spot"
)

// Meddling is one change to the simulated AWS from outside ferry.
type Meddling struct {
	Action string `json:"action"`
	// Group names the group (delete-group, set-capacity, detach);
	// Instance the instance (kill-instance).
	Group    string `json:"group,omitempty"`
	Instance string `json:"instance,omitempty"`
	// Min, Desired and Max are set-capacity's.
	Min, Desired, Max int32
	// LoadBalancer is the classic load balancer or target group name
	// detach detaches.
	LoadBalancer string `json:"load_balancer,omitempty"`
	// Count is how many Spot instances interrupt-spot interrupts.
	Count int `json:"count,omitempty"`
}

// Meddle makes m in the world, through the simulated APIs of the account
// and region holding its group or instance, as their owner (no ferry
// role): what AWS answers is the error. A group or instance found nowhere
// is an error naming it.
func (r *Region) Meddle(ctx context.Context, m Meddling) (string, error) {
	acct, awsRegion, group, err := r.locate(m)
	if err != nil {
		return "", err
	}
	api, ok := r.world.Clients(acct, awsRegion).AutoScaling.(*sim.AutoScaling)
	if !ok {
		return "", errors.New("region: the world's Auto Scaling is not the simulation's")
	}
	switch m.Action {
	case MeddleDeleteGroup:
		_, err = api.DeleteAutoScalingGroup(ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String(group), ForceDelete: aws.Bool(true)})
		return fmt.Sprintf("deleting group %s with its instances", group), err
	case MeddleSetCapacity:
		_, err = api.UpdateAutoScalingGroup(ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String(group),
			MinSize: aws.Int32(m.Min), DesiredCapacity: aws.Int32(m.Desired), MaxSize: aws.Int32(m.Max)})
		return fmt.Sprintf("group %s: min %d, desired %d, max %d", group, m.Min, m.Desired, m.Max), err
	case MeddleKillInstance:
		_, err = api.TerminateInstanceInAutoScalingGroup(ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{
			InstanceId: aws.String(m.Instance), ShouldDecrementDesiredCapacity: aws.Bool(false)})
		return fmt.Sprintf("instance %s of group %s terminated; Auto Scaling replaces it", m.Instance, group), err
	case MeddleDetach:
		return r.detach(ctx, api, group, m.LoadBalancer)
	case MeddleInterruptSpot:
		ids, err := r.world.InterruptSpot(acct, awsRegion, group, max(m.Count, 1), 0)
		if err == nil && len(ids) == 0 {
			err = fmt.Errorf("group %s has no Spot instance to interrupt", group)
		}
		return fmt.Sprintf("Spot instances %s of group %s interrupted: terminated in 2 minutes", strings.Join(ids, ", "), group), err
	}
	return "", fmt.Errorf("unknown action %q (there are %s, %s, %s, %s and %s)", m.Action, MeddleDeleteGroup, MeddleSetCapacity, MeddleKillInstance, MeddleDetach, MeddleInterruptSpot)
}

// locate finds the account, region and group of m: its group by name, or
// the group of its instance.
func (r *Region) locate(m Meddling) (acct, awsRegion, group string, err error) {
	for _, a := range r.world.Snapshot().Accounts {
		for _, g := range a.Groups {
			if m.Action == MeddleKillInstance {
				for _, inst := range g.Instances {
					if inst.ID == m.Instance {
						return a.Account, a.Region, g.Name, nil
					}
				}
				continue
			}
			if g.Name == m.Group {
				return a.Account, a.Region, g.Name, nil
			}
		}
	}
	if m.Action == MeddleKillInstance {
		return "", "", "", fmt.Errorf("no group of the world has an instance %q", m.Instance)
	}
	return "", "", "", fmt.Errorf("the world has no group %q", m.Group)
}

// detach detaches the classic load balancer or target group named lb
// from group.
func (r *Region) detach(ctx context.Context, api *sim.AutoScaling, group, lb string) (string, error) {
	out, err := api.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{group}})
	if err != nil || len(out.AutoScalingGroups) == 0 {
		return "", fmt.Errorf("describing group %s: %v", group, err)
	}
	g := out.AutoScalingGroups[0]
	for _, name := range g.LoadBalancerNames {
		if name == lb {
			_, err := api.DetachLoadBalancers(ctx, &autoscaling.DetachLoadBalancersInput{AutoScalingGroupName: aws.String(group), LoadBalancerNames: []string{lb}})
			return fmt.Sprintf("classic load balancer %s detached from group %s", lb, group), err
		}
	}
	for _, arn := range g.TargetGroupARNs {
		if strings.Contains(arn, ":targetgroup/"+lb+"/") {
			_, err := api.DetachLoadBalancerTargetGroups(ctx, &autoscaling.DetachLoadBalancerTargetGroupsInput{AutoScalingGroupName: aws.String(group), TargetGroupARNs: []string{arn}})
			return fmt.Sprintf("target group %s detached from group %s", lb, group), err
		}
	}
	return "", fmt.Errorf("group %s has no classic load balancer or target group %q attached", group, lb)
}

// serveMeddle serves POST WorldPath: a Meddling as JSON, answered with
// {"done": what was done} or {"error": why not}.
func (r *Region) serveMeddle(w http.ResponseWriter, req *http.Request) {
	if err := sameorigin.ContentType(req, "application/json"); err != nil {
		writeViewError(w, http.StatusUnsupportedMediaType, err.Error())
		return
	}
	var m Meddling
	if err := json.NewDecoder(io.LimitReader(req.Body, 1<<16)).Decode(&m); err != nil {
		writeViewError(w, http.StatusBadRequest, "the body is not a meddling: "+err.Error())
		return
	}
	done, err := r.Meddle(req.Context(), m)
	if err != nil {
		writeViewError(w, http.StatusBadRequest, err.Error())
		return
	}
	b, _ := json.Marshal(map[string]string{"done": done})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(b, '\n'))
}
