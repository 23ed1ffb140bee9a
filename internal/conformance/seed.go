package conformance

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/ferryhq/ferry/internal/naming"
)

// The project, config and services of the releases in
// testdata/conformance, and the names of what they use. Every account is
// seeded alike.
const (
	Project = "conformance/shop"
	Config  = "production"
	// AMIName is the Name tag the releases' "ami" looks the image up by.
	AMIName = "ubuntu"
)

// services are the services of the releases: each has a security group,
// a classic ELB, a target group and an instance profile named after it.
var services = []string{"web", "worker"}

func sgName(svc string) string      { return "conformance-shop-" + svc }
func elbName(svc string) string     { return "conformance-shop-" + svc + "-elb" }
func tgName(svc string) string      { return "conformance-shop-" + svc + "-tg" }
func profileName(svc string) string { return "conformance-shop-" + svc }

// subnetNames are the Name tags of the releases' subnets, by zone.
var subnetNames = map[string]string{"us-east-1a": "shop_private_a", "us-east-1b": "shop_private_b"}

// seed creates, over the wire with the SDK, what the bootstrap template,
// the DeployerStack and an operator would have made: in both accounts the
// deploy and publish roles (names from package naming, trusting the
// deployer's account), the asset bucket, a VPC with two tagged subnets, a
// tagged image, and per service a security group, a classic ELB, a target
// group and an instance profile; in the deployer's account the versioned
// deployer bucket.
func (e *env) seed(ctx context.Context) error {
	for _, account := range []string{DeployerAccount, SecondAccount} {
		cfg := motoConfig(e.moto.URL, account)
		if err := seedAccount(ctx, cfg, account); err != nil {
			return fmt.Errorf("conformance: seeding account %s: %w", account, err)
		}
	}
	s3c := s3.NewFromConfig(motoConfig(e.moto.URL, DeployerAccount))
	bucket := naming.DeployerBucketName(DeployerAccount, Region)
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		return fmt.Errorf("conformance: deployer bucket: %w", err)
	}
	if _, err := s3c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{
		Bucket:                  aws.String(bucket),
		VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusEnabled},
	}); err != nil {
		return fmt.Errorf("conformance: deployer bucket versioning: %w", err)
	}
	return nil
}

// trustPolicy is the deploy and publish roles' trust policy: the deployer's
// account may assume them (the bootstrap template's TrustedAccounts).
var trustPolicy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::` +
	DeployerAccount + `:root"},"Action":"sts:AssumeRole"}]}`

const ec2TrustPolicy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`

func seedAccount(ctx context.Context, cfg aws.Config, account string) error {
	iamc := iam.NewFromConfig(cfg)
	for _, role := range []string{naming.DeployRoleName(account, Region, ""), naming.PublishRoleName(account, Region, "")} {
		if _, err := iamc.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(role), AssumeRolePolicyDocument: aws.String(trustPolicy)}); err != nil {
			return fmt.Errorf("role %s: %w", role, err)
		}
	}
	s3c := s3.NewFromConfig(cfg)
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(naming.AssetBucketName(account, Region, ""))}); err != nil {
		return fmt.Errorf("asset bucket: %w", err)
	}

	ec2c := ec2.NewFromConfig(cfg)
	// An image moto preloads, tagged as the releases name it.
	imgs, err := ec2c.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"},
		Filters: []ec2types.Filter{{Name: aws.String("architecture"), Values: []string{"x86_64"}}}})
	if err != nil {
		return fmt.Errorf("images: %w", err)
	}
	if len(imgs.Images) == 0 {
		return fmt.Errorf("moto preloads no x86_64 image owned by amazon in %s", Region)
	}
	if _, err := ec2c.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{aws.ToString(imgs.Images[0].ImageId)}, Tags: []ec2types.Tag{
		{Key: aws.String(naming.TagName), Value: aws.String(AMIName)},
		{Key: aws.String(naming.TagDeployWith), Value: aws.String(naming.DeployWithValue)},
	}}); err != nil {
		return fmt.Errorf("tagging image: %w", err)
	}
	vpc, err := ec2c.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.20.0.0/16")})
	if err != nil {
		return fmt.Errorf("vpc: %w", err)
	}
	vpcID := vpc.Vpc.VpcId
	var subnetIDs []string
	for i, zone := range []string{"us-east-1a", "us-east-1b"} {
		sn, err := ec2c.CreateSubnet(ctx, &ec2.CreateSubnetInput{
			VpcId: vpcID, AvailabilityZone: aws.String(zone), CidrBlock: aws.String(fmt.Sprintf("10.20.%d.0/24", i)),
			TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeSubnet, Tags: []ec2types.Tag{
				{Key: aws.String(naming.TagName), Value: aws.String(subnetNames[zone])},
				{Key: aws.String(naming.TagDeployWith), Value: aws.String(naming.DeployWithValue)},
			}}},
		})
		if err != nil {
			return fmt.Errorf("subnet in %s: %w", zone, err)
		}
		subnetIDs = append(subnetIDs, aws.ToString(sn.Subnet.SubnetId))
	}

	elbc := elb.NewFromConfig(cfg)
	elbv2c := elbv2.NewFromConfig(cfg)
	alb, err := elbv2c.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("conformance-shop-alb"), Subnets: subnetIDs})
	if err != nil {
		return fmt.Errorf("application load balancer: %w", err)
	}
	for _, svc := range services {
		tags := map[string]string{naming.TagProjectName: Project, naming.TagConfigName: Config, naming.TagServiceName: svc}
		var ec2Tags []ec2types.Tag
		var elbTags []elbtypes.Tag
		var elbv2Tags []elbv2types.Tag
		for k, v := range tags {
			ec2Tags = append(ec2Tags, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
			elbTags = append(elbTags, elbtypes.Tag{Key: aws.String(k), Value: aws.String(v)})
			elbv2Tags = append(elbv2Tags, elbv2types.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
		ec2Tags = append(ec2Tags, ec2types.Tag{Key: aws.String(naming.TagName), Value: aws.String(sgName(svc))})
		if _, err := ec2c.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{
			GroupName: aws.String(sgName(svc)), Description: aws.String("conformance " + svc), VpcId: vpcID,
			TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeSecurityGroup, Tags: ec2Tags}},
		}); err != nil {
			return fmt.Errorf("security group of %s: %w", svc, err)
		}
		if _, err := elbc.CreateLoadBalancer(ctx, &elb.CreateLoadBalancerInput{
			LoadBalancerName:  aws.String(elbName(svc)),
			Listeners:         []elbtypes.Listener{{Protocol: aws.String("HTTP"), LoadBalancerPort: 80, InstancePort: aws.Int32(8000)}},
			AvailabilityZones: []string{"us-east-1a", "us-east-1b"},
			Tags:              elbTags,
		}); err != nil {
			return fmt.Errorf("classic load balancer of %s: %w", svc, err)
		}
		tg, err := elbv2c.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{
			Name: aws.String(tgName(svc)), Protocol: elbv2types.ProtocolEnumHttp, Port: aws.Int32(8000), VpcId: vpcID, Tags: elbv2Tags,
		})
		if err != nil {
			return fmt.Errorf("target group of %s: %w", svc, err)
		}
		if _, err := elbv2c.CreateListener(ctx, &elbv2.CreateListenerInput{
			LoadBalancerArn: alb.LoadBalancers[0].LoadBalancerArn, Protocol: elbv2types.ProtocolEnumHttp,
			Port:           aws.Int32(int32(8000 + len(svc))),
			DefaultActions: []elbv2types.Action{{Type: elbv2types.ActionTypeEnumForward, TargetGroupArn: tg.TargetGroups[0].TargetGroupArn}},
		}); err != nil {
			return fmt.Errorf("listener of %s: %w", svc, err)
		}
		path := naming.InstanceProfilePath(Project, Config, svc)
		if _, err := iamc.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(profileName(svc)), Path: aws.String(path),
			AssumeRolePolicyDocument: aws.String(ec2TrustPolicy)}); err != nil {
			return fmt.Errorf("instance role of %s: %w", svc, err)
		}
		if _, err := iamc.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String(profileName(svc)), Path: aws.String(path)}); err != nil {
			return fmt.Errorf("instance profile of %s: %w", svc, err)
		}
		if _, err := iamc.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{
			InstanceProfileName: aws.String(profileName(svc)), RoleName: aws.String(profileName(svc))}); err != nil {
			return fmt.Errorf("instance profile role of %s: %w", svc, err)
		}
	}
	return nil
}
