package deployer

import (
	"context"
	"fmt"
	"time"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/health/errorrate"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/resources"
	"github.com/ferryhq/ferry/internal/tuning"
)

// checkErrorRates is the error-rate gate of the services that set
// max_error_rate: a *failure.HaltError when a service's load balancers
// answered more than that share of their requests with a 5xx from their
// instances over the last tuning.ErrorRateWindow, as their own
// CloudWatch metrics count them (package errorrate: the previous
// release's instances count too while they serve). Load balancers
// without requests in the window say nothing. It reads the target
// groups' load balancers (one DescribeTargetGroups) and the metrics (one
// GetMetricData per 250 load balancer and target group pairs); a failure
// is retryable when transient, else it fails the gate (a
// *failure.DeployError: a rate that cannot be read never passes). It
// changes nothing.
func checkErrorRates(ctx context.Context, c *cloud.Clients, r *release.Release, now time.Time) error {
	sourcesOf, all, err := errorSources(ctx, c, r)
	if err != nil || len(all) == 0 {
		return err
	}
	traffic, err := errorrate.Read(ctx, c.CloudWatch, all, tuning.ErrorRateWindow, now)
	if err != nil {
		return err
	}
	for _, svc := range r.ServiceNames() {
		var sum errorrate.Traffic
		for _, src := range sourcesOf[svc] {
			sum = sum.Add(traffic[src])
		}
		if limit := r.Services[svc].MaxErrorRate; limit != nil && sum.Requests > 0 && sum.Rate() > *limit {
			return &failure.HaltError{Reason: fmt.Sprintf("service %s: its load balancers answered %.1f%% of %.0f requests with a 5xx in the last %s, more than its max_error_rate of %g%%",
				svc, 100*sum.Rate(), sum.Requests, tuning.ErrorRateWindow, 100**limit)}
		}
	}
	return nil
}

// errorSources are the load balancers whose traffic makes the error rate
// of each service that sets max_error_rate (its classic load balancers,
// and each of its target groups as each load balancer using it sends it
// traffic), by service, and all of them.
func errorSources(ctx context.Context, c *cloud.Clients, r *release.Release) (map[string][]errorrate.Source, []errorrate.Source, error) {
	var names []string
	for _, svc := range r.ServiceNames() {
		if s := r.Services[svc]; s.MaxErrorRate != nil {
			names = append(names, s.TargetGroups...)
		}
	}
	arns, lbsOf, err := resources.TargetGroups(ctx, c.ELBv2, names)
	if err != nil {
		return nil, nil, err
	}
	sourcesOf := map[string][]errorrate.Source{}
	var all []errorrate.Source
	for _, svc := range r.ServiceNames() {
		s := r.Services[svc]
		if s.MaxErrorRate == nil {
			continue
		}
		for _, lb := range s.ELBs {
			sourcesOf[svc] = append(sourcesOf[svc], errorrate.Source{Classic: lb})
		}
		for _, tg := range s.TargetGroups {
			for _, lb := range lbsOf[arns[tg]] {
				sourcesOf[svc] = append(sourcesOf[svc], errorrate.Source{TargetGroup: arns[tg], LoadBalancer: lb})
			}
		}
		all = append(all, sourcesOf[svc]...)
	}
	return sourcesOf, all, nil
}
