package tags_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/stretchr/testify/assert"

	"github.com/ferryhq/ferry/internal/naming/tags"
)

func TestFrom(t *testing.T) {
	want := map[string]string{"a": "1", "b": ""}
	tests := []struct {
		name string
		got  map[string]string
	}{
		{"EC2", tags.FromEC2([]ec2types.Tag{{Key: aws.String("a"), Value: aws.String("1")}, {Key: aws.String("b")}})},
		{"ASG", tags.FromASG([]asgtypes.TagDescription{{Key: aws.String("a"), Value: aws.String("1")}, {Key: aws.String("b")}})},
		{"ELB", tags.FromELB([]elbtypes.Tag{{Key: aws.String("a"), Value: aws.String("1")}, {Key: aws.String("b")}})},
		{"ELBv2", tags.FromELBv2([]elbv2types.Tag{{Key: aws.String("a"), Value: aws.String("1")}, {Key: aws.String("b")}})},
		{"SNS", tags.FromSNS([]snstypes.Tag{{Key: aws.String("a"), Value: aws.String("1")}, {Key: aws.String("b")}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, want, tt.got)
		})
	}
	assert.Empty(t, tags.FromEC2(nil))
}

func TestLists(t *testing.T) {
	m := map[string]string{"b": "2", "a": "1"}
	assert.Equal(t, []ec2types.Tag{
		{Key: aws.String("a"), Value: aws.String("1")}, {Key: aws.String("b"), Value: aws.String("2")},
	}, tags.EC2(m), "sorted by key")
	assert.Equal(t, []cwtypes.Tag{
		{Key: aws.String("a"), Value: aws.String("1")}, {Key: aws.String("b"), Value: aws.String("2")},
	}, tags.CloudWatch(m))
	asg := tags.ASG(m, "g")
	assert.Len(t, asg, 2)
	for i, k := range []string{"a", "b"} {
		assert.Equal(t, k, aws.ToString(asg[i].Key))
		assert.Equal(t, m[k], aws.ToString(asg[i].Value))
		assert.True(t, aws.ToBool(asg[i].PropagateAtLaunch))
		assert.Equal(t, "g", aws.ToString(asg[i].ResourceId))
		assert.Equal(t, "auto-scaling-group", aws.ToString(asg[i].ResourceType))
	}
	assert.Nil(t, tags.EC2(nil), "no tags, no list")
}
