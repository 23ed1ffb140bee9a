package sim

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/cloud"
)

// The Auto Scaling processes a group's SuspendProcesses can suspend.
const (
	ProcessLaunch            = "Launch"
	ProcessTerminate         = "Terminate"
	ProcessAddToLoadBalancer = "AddToLoadBalancer"
	ProcessAlarmNotification = "AlarmNotification"
	ProcessAZRebalance       = "AZRebalance"
	ProcessHealthCheck       = "HealthCheck"
	ProcessInstanceRefresh   = "InstanceRefresh"
	ProcessReplaceUnhealthy  = "ReplaceUnhealthy"
	ProcessScheduledActions  = "ScheduledActions"
)

// Processes returns every process name, in the API reference's order.
func Processes() []string {
	return []string{
		ProcessLaunch, ProcessTerminate, ProcessAddToLoadBalancer, ProcessAlarmNotification, ProcessAZRebalance,
		ProcessHealthCheck, ProcessInstanceRefresh, ProcessReplaceUnhealthy, ProcessScheduledActions,
	}
}

// SuspendProcesses suspends processes of a group (every process when the
// list is empty). The simulation honours Launch (no launch, not even a
// replacement), Terminate (no scale-in termination; ForceDelete still
// terminates), AlarmNotification (alarms do not execute the group's
// policies), AZRebalance (no rebalancing) and ReplaceUnhealthy (a dead
// instance is not replaced). An unknown process or group is a
// ValidationError. Suspending a suspended process changes nothing.
func (c *AutoScaling) SuspendProcesses(ctx context.Context, in *autoscaling.SuspendProcessesInput, _ ...func(*autoscaling.Options)) (*autoscaling.SuspendProcessesOutput, error) {
	const op = "SuspendProcesses"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	return &autoscaling.SuspendProcessesOutput{}, c.end(op, r.setProcesses(deref(in.AutoScalingGroupName), in.ScalingProcesses, true))
}

// ResumeProcesses resumes processes of a group (every process when the
// list is empty). Resuming AZRebalance rebalances the group if it needs
// it; resuming Launch fills it to its desired capacity.
func (c *AutoScaling) ResumeProcesses(ctx context.Context, in *autoscaling.ResumeProcessesInput, _ ...func(*autoscaling.Options)) (*autoscaling.ResumeProcessesOutput, error) {
	const op = "ResumeProcesses"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	return &autoscaling.ResumeProcessesOutput{}, c.end(op, r.setProcesses(deref(in.AutoScalingGroupName), in.ScalingProcesses, false))
}

func (r *region) setProcesses(name string, processes []string, suspend bool) error {
	g, err := r.lookupGroup(name)
	if err != nil {
		return err
	}
	action := "ResumeProcesses"
	if suspend {
		action = "SuspendProcesses"
	}
	if err := r.w.authorize(groupAuth(action, g)); err != nil {
		return err
	}
	if len(processes) == 0 {
		processes = Processes()
	}
	for _, p := range processes {
		if !slices.Contains(Processes(), p) {
			return apiErrf(cloud.CodeValidation, "Invalid process: %s", p)
		}
	}
	now := r.w.requestTime()
	for _, p := range processes {
		switch {
		case suspend && !g.suspended[p]:
			g.suspended[p] = true
			g.suspendedAt[p] = now
		case !suspend && g.suspended[p]:
			delete(g.suspended, p)
			delete(g.suspendedAt, p)
		}
	}
	if !suspend {
		r.fill(g, now, "")
		r.rebalance(g, now)
	}
	return nil
}

// suspendedProcesses describes a group's suspended processes.
func (g *group) suspendedProcesses() []astypes.SuspendedProcess {
	out := []astypes.SuspendedProcess{}
	for _, p := range Processes() {
		if g.suspended[p] {
			out = append(out, astypes.SuspendedProcess{
				ProcessName: aws.String(p), SuspensionReason: aws.String(fmt.Sprintf("User suspended at %s", stamp(g.suspendedAt[p]))),
			})
		}
	}
	return out
}
