package resources

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/release"
)

// CheckHeadroom checks, before anything of the release exists, that the
// target region has room for the Auto Scaling groups the release adds:
// one per service, standing beside the previous release's until those
// are retired. The quota and the count are Auto Scaling's own
// (DescribeAccountLimits: MaxNumberOfAutoScalingGroups and
// NumberOfAutoScalingGroups, which counts groups still being deleted).
// Too little room is a *failure.BadReleaseError, found before anything is
// created rather than by a CreateAutoScalingGroup refused mid-deploy
// (ValidateResources checks it; Deploy does not, as the release's own
// groups count once it has made them). Deploys that start at the same
// moment in one region can still race for the last groups: the one that
// loses fails at Deploy and is cleaned up.
func CheckHeadroom(ctx context.Context, api cloud.AutoScaling, r *release.Release) error {
	out, err := api.DescribeAccountLimits(ctx, &autoscaling.DescribeAccountLimitsInput{})
	if err != nil {
		return cloud.Classify("autoscaling:DescribeAccountLimits", err)
	}
	quota, used := int(aws.ToInt32(out.MaxNumberOfAutoScalingGroups)), int(aws.ToInt32(out.NumberOfAutoScalingGroups))
	if adds := len(r.Services); used+adds > quota {
		return failure.BadRelease(fmt.Sprintf("services: the region has %d of its quota of %d Auto Scaling groups, and the release adds %d beside the previous release's until they are retired: ask for a higher quota (Service Quotas, Amazon EC2 Auto Scaling: Auto Scaling groups per region) or delete unused groups",
			used, quota, adds))
	}
	return nil
}
