package fleet_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/fleet"
)

// TestWeight: an instance counts its WeightedCapacity units, and one
// without a weight (or an unreadable or zero one) counts 1
// (WeightedCapacity, "Configure instance weighting for Amazon EC2 Auto
// Scaling", Auto Scaling User Guide).
func TestWeight(t *testing.T) {
	for w, want := range map[string]int{"": 1, "2": 2, "8": 8, "0": 1, "-1": 1, "x": 1} {
		i := astypes.Instance{}
		if w != "" {
			i.WeightedCapacity = aws.String(w)
		}
		assert.Equal(t, want, fleet.Weight(i), "weight %q", w)
	}
}

// TestCreateMixedGroupWithoutPools: a mixed group whose Spot strategy is
// not lowest-price gives no SpotInstancePools, which AWS accepts only with
// lowest-price and from 1 to 20 (InstancesDistribution, Auto Scaling API
// Reference).
func TestCreateMixedGroupWithoutPools(t *testing.T) {
	e := newEnv(t)
	rel := e.release("r1")
	tmpl, grp := specs("r1")
	grp.Mixed = &fleet.Mixed{
		Overrides:              []astypes.LaunchTemplateOverrides{{InstanceType: aws.String("t2.nano")}, {InstanceType: aws.String("t3.nano")}},
		SpotAllocationStrategy: "capacity-optimized", OnDemandAllocationStrategy: "prioritized",
	}
	require.NoError(t, rel.CreateTemplate(e.ctx, tmpl))
	require.NoError(t, rel.CreateGroup(e.ctx, grp))
	assert.NotNil(t, describe(t, e, grp.Name).MixedInstancesPolicy)
}
