package balancers_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/balancers"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/tuning"
)

// fake answers DescribeInstanceHealth and DescribeTargetHealth from maps,
// and records what it was asked.
type fake struct {
	instances map[string][]elbtypes.InstanceState
	targets   map[string][]elbv2types.TargetHealthDescription
	err       error
	asked     []string
}

func (f *fake) DescribeInstanceHealth(_ context.Context, in *elb.DescribeInstanceHealthInput, _ ...func(*elb.Options)) (*elb.DescribeInstanceHealthOutput, error) {
	f.asked = append(f.asked, aws.ToString(in.LoadBalancerName))
	if f.err != nil {
		return nil, f.err
	}
	return &elb.DescribeInstanceHealthOutput{InstanceStates: f.instances[aws.ToString(in.LoadBalancerName)]}, nil
}

func (f *fake) DescribeTargetHealth(_ context.Context, in *elbv2.DescribeTargetHealthInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeTargetHealthOutput, error) {
	f.asked = append(f.asked, aws.ToString(in.TargetGroupArn))
	if f.err != nil {
		return nil, f.err
	}
	return &elbv2.DescribeTargetHealthOutput{TargetHealthDescriptions: f.targets[aws.ToString(in.TargetGroupArn)]}, nil
}

func instance(id, state, description string) elbtypes.InstanceState {
	return elbtypes.InstanceState{InstanceId: aws.String(id), State: aws.String(state), Description: aws.String(description)}
}

func target(id string, state elbv2types.TargetHealthStateEnum, reason elbv2types.TargetHealthReasonEnum) elbv2types.TargetHealthDescription {
	return elbv2types.TargetHealthDescription{
		Target:       &elbv2types.TargetDescription{Id: aws.String(id)},
		TargetHealth: &elbv2types.TargetHealth{State: state, Reason: reason, Description: aws.String("d")},
	}
}

func TestRead(t *testing.T) {
	tests := []struct {
		name          string
		instances     map[string][]elbtypes.InstanceState
		targets       map[string][]elbv2types.TargetHealthDescription
		wantELB       map[string]map[string]string
		wantTG        map[string]map[string]string
		notServed     string // of i-1 and i-2
		wantNotServed string
	}{
		{
			name:      "healthy",
			instances: map[string][]elbtypes.InstanceState{"lb": {instance("i-1", "InService", "N/A")}},
			targets:   map[string][]elbv2types.TargetHealthDescription{"tg": {target("i-2", elbv2types.TargetHealthStateEnumHealthy, "")}},
			wantELB:   map[string]map[string]string{"lb": {"i-1": "InService"}},
			wantTG:    map[string]map[string]string{"tg": {"i-2": "healthy"}},
		},
		{
			name:          "a zone the classic load balancer does not route to",
			instances:     map[string][]elbtypes.InstanceState{"lb": {instance("i-1", "OutOfService", balancers.ZoneNotRouted)}},
			wantELB:       map[string]map[string]string{"lb": {"i-1": "OutOfService"}},
			wantTG:        map[string]map[string]string{"tg": {}},
			wantNotServed: "classic load balancer lb does not route to the zone of instance i-1",
		},
		{
			name:          "a target no load balancer sends traffic to",
			targets:       map[string][]elbv2types.TargetHealthDescription{"tg": {target("i-2", elbv2types.TargetHealthStateEnumUnused, elbv2types.TargetHealthReasonEnumNotInUse)}},
			wantELB:       map[string]map[string]string{"lb": {}},
			wantTG:        map[string]map[string]string{"tg": {"i-2": "unused"}},
			wantNotServed: "target group tg does not send traffic to instance i-2 (Target.NotInUse: d)",
		},
		{
			// Configure connection draining, Classic Load Balancers User
			// Guide: a de-registering instance is reported "InService:
			// Instance deregistration currently in progress"; the load
			// balancer sends it no new request.
			name:      "deregistering with connection draining is not in service",
			instances: map[string][]elbtypes.InstanceState{"lb": {instance("i-1", "InService", balancers.DeregistrationInProgress)}},
			wantELB:   map[string]map[string]string{"lb": {"i-1": balancers.Deregistering}},
			wantTG:    map[string]map[string]string{"tg": {}},
		},
		{
			name:    "unused while registering is served",
			targets: map[string][]elbv2types.TargetHealthDescription{"tg": {target("i-2", elbv2types.TargetHealthStateEnumInitial, elbv2types.TargetHealthReasonEnumRegistrationInProgress)}},
			wantELB: map[string]map[string]string{"lb": {}},
			wantTG:  map[string]map[string]string{"tg": {"i-2": "initial"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{instances: tt.instances, targets: tt.targets}
			v, err := balancers.Read(t.Context(), f, f, []string{"lb", "lb"}, []string{"tg"})
			require.NoError(t, err)
			assert.Equal(t, []string{"lb", "tg"}, f.asked, "each once")
			assert.Equal(t, tt.wantELB, v.ELB)
			assert.Equal(t, tt.wantTG, v.TargetGroups)
			got := v.NotServed("i-1", "i-2")
			if tt.wantNotServed == "" {
				assert.Empty(t, got)
			} else {
				assert.Contains(t, got, tt.wantNotServed)
			}
		})
	}
}

// TestReadFailures: a read that fails fails the whole, classified; it is
// the first, made alone, so the others add no load to a throttled
// account.
func TestReadFailures(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"throttled", &smithy.GenericAPIError{Code: "Throttling"}, failure.NameRetryable},
		{"refused", &smithy.GenericAPIError{Code: "AccessDenied"}, failure.NameDeploy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{err: tt.err}
			_, err := balancers.Read(t.Context(), f, f, []string{"lb-b", "lb-a"}, []string{"tg-1", "tg-2", "tg-3"})
			assert.Equal(t, tt.want, failure.NameOf(err))
			assert.True(t, errors.Is(err, tt.err))
			assert.Equal(t, []string{"lb-a"}, f.asked, "the first read, alone, fails the whole: the others are not made")
		})
	}
}

// slow answers every read with no instance, each taking a second.
type slow struct{}

func (slow) DescribeInstanceHealth(ctx context.Context, _ *elb.DescribeInstanceHealthInput, _ ...func(*elb.Options)) (*elb.DescribeInstanceHealthOutput, error) {
	fanout.Spend(ctx, time.Second)
	return &elb.DescribeInstanceHealthOutput{}, nil
}

func (slow) DescribeTargetHealth(ctx context.Context, _ *elbv2.DescribeTargetHealthInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeTargetHealthOutput, error) {
	fanout.Spend(ctx, time.Second)
	return &elbv2.DescribeTargetHealthOutput{}, nil
}

// TestReadAtOnce: the first read alone, then a health check's whole
// budget of reads at once: a check that reads its most takes two calls'
// time, not one and three.
func TestReadAtOnce(t *testing.T) {
	var tgs []string
	for i := range tuning.BalancerReadBurst {
		tgs = append(tgs, fmt.Sprintf("arn:aws:elasticloadbalancing:us-east-1:111111111111:targetgroup/tg%02d/0123456789abcdef", i))
	}
	tests := []struct {
		name      string
		elbs, tgs []string
		want      time.Duration
	}{
		{"none", nil, nil, 0},
		{"one", nil, tgs[:1], time.Second},
		{"a check's most", nil, tgs, 2 * time.Second},
		{"a classic load balancer and the rest", []string{"web"}, tgs[1:], 2 * time.Second},
		{"more than a check reads: in turns", []string{"web", "api"}, tgs, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, tl := fanout.WithTimeline(t.Context())
			_, err := balancers.Read(ctx, slow{}, slow{}, tt.elbs, tt.tgs)
			require.NoError(t, err)
			assert.Equal(t, tt.want, tl.Elapsed())
		})
	}
}
