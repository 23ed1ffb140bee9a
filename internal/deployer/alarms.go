package deployer

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/resources"
)

// checkGates are the release's gates on what the users of its services
// see, in order: its alarms (checkAlarms), then its services' error
// rates (checkErrorRates). CheckHealthy, Bake and the swap's gate judge
// them at every check.
func checkGates(ctx context.Context, c *cloud.Clients, r *release.Release, now time.Time) error {
	if err := checkAlarms(ctx, c.CloudWatch, r); err != nil {
		return err
	}
	return checkErrorRates(ctx, c, r, now)
}

// checkAlarms is the release's alarm gate: a *failure.HaltError when one
// of the alarms r names (Release.AlarmNames) is in ALARM, or no longer
// exists (the gate fails closed: an alarm it cannot read never passes).
// It reads them with one DescribeAlarms per 100 names; a failure is
// classified (a transient one is retryable).
func checkAlarms(ctx context.Context, api cloud.CloudWatch, r *release.Release) error {
	names := r.AlarmNames()
	if len(names) == 0 {
		return nil
	}
	alarms, err := resources.DescribeAlarms(ctx, api, names)
	if err != nil {
		return err
	}
	var firing, gone []string
	seen := map[string]bool{}
	for _, a := range alarms {
		name := aws.ToString(a.AlarmName)
		seen[name] = true
		if a.StateValue == cwtypes.StateValueAlarm {
			firing = append(firing, name)
		}
	}
	for _, n := range names {
		if !seen[n] {
			gone = append(gone, n)
		}
	}
	slices.Sort(firing)
	switch {
	case len(firing) > 0:
		return &failure.HaltError{Reason: "alarm in ALARM: " + strings.Join(firing, ", ")}
	case len(gone) > 0:
		return &failure.HaltError{Reason: "alarm no longer exists (the gate fails closed): " + strings.Join(gone, ", ")}
	}
	return nil
}
