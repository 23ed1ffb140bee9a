package sim_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/stretchr/testify/require"
)

// BenchmarkHealthRound measures one CheckHealthy-like round over 50 groups
// of 100 instances: a describe by name per group plus the load balancer and
// target group health (which hold all 5000 instances).
func BenchmarkHealthRound(b *testing.B) {
	f := newFixture(b)
	for i := range 50 {
		name := fmt.Sprintf("grp%02d", i)
		f.template(b, "lt-"+name, amiOK, "")
		in := f.groupInput(b, name, 100)
		in.MaxSize = aws.Int32(100)
		_, err := f.c.AutoScaling.CreateAutoScalingGroup(f.ctx, in)
		require.NoError(b, err)
	}
	tg := f.tgARN(b)
	b.ResetTimer()
	for b.Loop() {
		f.clk.Advance(10 * time.Second)
		for i := range 50 {
			if g := f.describe(b, fmt.Sprintf("grp%02d", i)); g == nil || len(g.Instances) != 100 {
				b.Fatal("group missing")
			}
		}
		_, err := f.c.ELB.DescribeInstanceHealth(f.ctx, &elb.DescribeInstanceHealthInput{LoadBalancerName: aws.String(elbName)})
		require.NoError(b, err)
		_, err = f.c.ELBv2.DescribeTargetHealth(f.ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(tg)})
		require.NoError(b, err)
	}
}
