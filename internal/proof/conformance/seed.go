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
	sd := &seeder{
		iam: iam.NewFromConfig(cfg), s3: s3.NewFromConfig(cfg), ec2: ec2.NewFromConfig(cfg),
		elb: elb.NewFromConfig(cfg), elbv2: elbv2.NewFromConfig(cfg),
	}
	if err := sd.bootstrap(ctx, account); err != nil {
		return err
	}
	if err := sd.image(ctx); err != nil {
		return err
	}
	if err := sd.network(ctx); err != nil {
		return err
	}
	for _, svc := range services {
		if err := sd.service(ctx, svc); err != nil {
			return err
		}
	}
	return nil
}

// seeder creates one account's resources through moto's APIs. network
// sets vpcID, subnetIDs and albARN for the services' resources.
type seeder struct {
	iam   *iam.Client
	s3    *s3.Client
	ec2   *ec2.Client
	elb   *elb.Client
	elbv2 *elbv2.Client

	vpcID     *string
	subnetIDs []string
	albARN    *string
}

// bootstrap creates what ferry's bootstrap template would: the deploy and
// publish roles and the asset bucket.
func (sd *seeder) bootstrap(ctx context.Context, account string) error {
	for _, role := range []string{naming.DeployRoleName(account, Region, ""), naming.PublishRoleName(account, Region, "")} {
		if _, err := sd.iam.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(role), AssumeRolePolicyDocument: aws.String(trustPolicy)}); err != nil {
			return fmt.Errorf("role %s: %w", role, err)
		}
	}
	if _, err := sd.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(naming.AssetBucketName(account, Region, ""))}); err != nil {
		return fmt.Errorf("asset bucket: %w", err)
	}
	return nil
}

// image tags an image moto preloads as the releases name it.
func (sd *seeder) image(ctx context.Context) error {
	imgs, err := sd.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"},
		Filters: []ec2types.Filter{{Name: aws.String("architecture"), Values: []string{"x86_64"}}}})
	if err != nil {
		return fmt.Errorf("images: %w", err)
	}
	if len(imgs.Images) == 0 {
		return fmt.Errorf("moto preloads no x86_64 image owned by amazon in %s", Region)
	}
	if _, err := sd.ec2.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{aws.ToString(imgs.Images[0].ImageId)}, Tags: []ec2types.Tag{
		{Key: aws.String(naming.TagName), Value: aws.String(AMIName)},
		{Key: aws.String(naming.TagDeployWith), Value: aws.String(naming.DeployWithValue)},
	}}); err != nil {
		return fmt.Errorf("tagging image: %w", err)
	}
	return nil
}

// network creates the VPC, a tagged subnet in each zone and the
// application load balancer the services' listeners join.
func (sd *seeder) network(ctx context.Context) error {
	vpc, err := sd.ec2.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.20.0.0/16")})
	if err != nil {
		return fmt.Errorf("vpc: %w", err)
	}
	sd.vpcID = vpc.Vpc.VpcId
	for i, zone := range []string{"us-east-1a", "us-east-1b"} {
		sn, err := sd.ec2.CreateSubnet(ctx, &ec2.CreateSubnetInput{
			VpcId: sd.vpcID, AvailabilityZone: aws.String(zone), CidrBlock: aws.String(fmt.Sprintf("10.20.%d.0/24", i)),
			TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeSubnet, Tags: []ec2types.Tag{
				{Key: aws.String(naming.TagName), Value: aws.String(subnetNames[zone])},
				{Key: aws.String(naming.TagDeployWith), Value: aws.String(naming.DeployWithValue)},
			}}},
		})
		if err != nil {
			return fmt.Errorf("subnet in %s: %w", zone, err)
		}
		sd.subnetIDs = append(sd.subnetIDs, aws.ToString(sn.Subnet.SubnetId))
	}
	alb, err := sd.elbv2.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("conformance-shop-alb"), Subnets: sd.subnetIDs})
	if err != nil {
		return fmt.Errorf("application load balancer: %w", err)
	}
	sd.albARN = alb.LoadBalancers[0].LoadBalancerArn
	return nil
}

// service creates one service's security group, classic load balancer,
// target group (with a listener on the application load balancer) and
// instance profile, tagged with the project, config and service.
func (sd *seeder) service(ctx context.Context, svc string) error {
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
	if _, err := sd.ec2.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{
		GroupName: aws.String(sgName(svc)), Description: aws.String("conformance " + svc), VpcId: sd.vpcID,
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeSecurityGroup, Tags: ec2Tags}},
	}); err != nil {
		return fmt.Errorf("security group of %s: %w", svc, err)
	}
	if _, err := sd.elb.CreateLoadBalancer(ctx, &elb.CreateLoadBalancerInput{
		LoadBalancerName:  aws.String(elbName(svc)),
		Listeners:         []elbtypes.Listener{{Protocol: aws.String("HTTP"), LoadBalancerPort: 80, InstancePort: aws.Int32(8000)}},
		AvailabilityZones: []string{"us-east-1a", "us-east-1b"},
		Tags:              elbTags,
	}); err != nil {
		return fmt.Errorf("classic load balancer of %s: %w", svc, err)
	}
	// Made with the API, it has connection draining disabled, which
	// ValidateResources refuses: enable it, as its owner would.
	if _, err := sd.elb.ModifyLoadBalancerAttributes(ctx, &elb.ModifyLoadBalancerAttributesInput{
		LoadBalancerName:       aws.String(elbName(svc)),
		LoadBalancerAttributes: &elbtypes.LoadBalancerAttributes{ConnectionDraining: &elbtypes.ConnectionDraining{Enabled: true, Timeout: aws.Int32(30)}},
	}); err != nil {
		return fmt.Errorf("connection draining of %s: %w", svc, err)
	}
	if err := sd.targetGroup(ctx, svc, elbv2Tags); err != nil {
		return err
	}
	return sd.instanceProfile(ctx, svc)
}

// targetGroup creates svc's target group and a listener forwarding to it.
func (sd *seeder) targetGroup(ctx context.Context, svc string, tags []elbv2types.Tag) error {
	tg, err := sd.elbv2.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{
		Name: aws.String(tgName(svc)), Protocol: elbv2types.ProtocolEnumHttp, Port: aws.Int32(8000), VpcId: sd.vpcID, Tags: tags,
	})
	if err != nil {
		return fmt.Errorf("target group of %s: %w", svc, err)
	}
	if _, err := sd.elbv2.CreateListener(ctx, &elbv2.CreateListenerInput{
		LoadBalancerArn: sd.albARN, Protocol: elbv2types.ProtocolEnumHttp,
		Port:           aws.Int32(int32(8000 + len(svc))),
		DefaultActions: []elbv2types.Action{{Type: elbv2types.ActionTypeEnumForward, TargetGroupArn: tg.TargetGroups[0].TargetGroupArn}},
	}); err != nil {
		return fmt.Errorf("listener of %s: %w", svc, err)
	}
	return nil
}

// instanceProfile creates svc's instance role and profile on the path
// ferry's deploy role may pass.
func (sd *seeder) instanceProfile(ctx context.Context, svc string) error {
	path := naming.InstanceProfilePath(Project, Config, svc)
	if _, err := sd.iam.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(profileName(svc)), Path: aws.String(path),
		AssumeRolePolicyDocument: aws.String(ec2TrustPolicy)}); err != nil {
		return fmt.Errorf("instance role of %s: %w", svc, err)
	}
	if _, err := sd.iam.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String(profileName(svc)), Path: aws.String(path)}); err != nil {
		return fmt.Errorf("instance profile of %s: %w", svc, err)
	}
	if _, err := sd.iam.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{
		InstanceProfileName: aws.String(profileName(svc)), RoleName: aws.String(profileName(svc))}); err != nil {
		return fmt.Errorf("instance profile role of %s: %w", svc, err)
	}
	return nil
}
