package sim_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/cloud"
)

func tagFilter(key, value string) []ec2types.Filter {
	return []ec2types.Filter{{Name: aws.String("tag:" + key), Values: []string{value}}}
}

// https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeImages.html
// An unknown image id is InvalidAMIID.NotFound; filters select by tag and
// an empty match is an empty list, not an error.
func TestDescribeImages(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name    string
		in      *ec2.DescribeImagesInput
		want    []string
		errCode string
	}{
		{"by Name tag", &ec2.DescribeImagesInput{Filters: tagFilter("Name", "ubuntu")}, []string{amiOK}, ""},
		{"by Name tag and DeployWith", &ec2.DescribeImagesInput{Filters: append(tagFilter("Name", "ubuntu-untagged"), tagFilter("DeployWith", "ferry")...)}, nil, ""},
		{"by id", &ec2.DescribeImagesInput{ImageIds: []string{amiBad}}, []string{amiBad}, ""},
		{"by owner self and name", &ec2.DescribeImagesInput{Owners: []string{"self"}, Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{"ubuntu-broken"}}}}, []string{amiBad}, ""},
		{"unknown id", &ec2.DescribeImagesInput{ImageIds: []string{"ami-0000000000000ffff"}}, nil, cloud.CodeAMINotFound},
		{"malformed id", &ec2.DescribeImagesInput{ImageIds: []string{"ubuntu"}}, nil, "InvalidAMIID.Malformed"},
		{"unknown filter", &ec2.DescribeImagesInput{Filters: []ec2types.Filter{{Name: aws.String("colour"), Values: []string{"x"}}}}, nil, "InvalidParameterValue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := f.c.EC2.DescribeImages(f.ctx, tt.in)
			if tt.errCode != "" {
				require.Error(t, err)
				assert.Equal(t, tt.errCode, cloud.ErrorCode(err))
				return
			}
			require.NoError(t, err)
			var got []string
			for _, i := range out.Images {
				got = append(got, *i.ImageId)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeSubnets.html
// https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeSecurityGroups.html
func TestDescribeSubnetsAndSecurityGroups(t *testing.T) {
	f := newFixture(t)
	subnets := func(in *ec2.DescribeSubnetsInput) ([]string, error) {
		out, err := f.c.EC2.DescribeSubnets(f.ctx, in)
		if err != nil {
			return nil, err
		}
		var ids []string
		for _, s := range out.Subnets {
			ids = append(ids, *s.SubnetId)
		}
		return ids, nil
	}
	groups := func(in *ec2.DescribeSecurityGroupsInput) ([]string, error) {
		out, err := f.c.EC2.DescribeSecurityGroups(f.ctx, in)
		if err != nil {
			return nil, err
		}
		var ids []string
		for _, s := range out.SecurityGroups {
			ids = append(ids, *s.GroupId)
		}
		return ids, nil
	}
	tests := []struct {
		name    string
		call    func() ([]string, error)
		want    []string
		errCode string
	}{
		{"subnets by Name tags", func() ([]string, error) {
			return subnets(&ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{{Name: aws.String("tag:Name"), Values: []string{"test_private_subnet_a", "test_private_subnet_b"}}}})
		}, []string{subnetA, subnetB}, ""},
		{"subnets by id", func() ([]string, error) { return subnets(&ec2.DescribeSubnetsInput{SubnetIds: []string{subnetB}}) }, []string{subnetB}, ""},
		{"unknown subnet id", func() ([]string, error) {
			return subnets(&ec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-0000000000000dead"}})
		}, nil, cloud.CodeSubnetNotFound},
		{"security group by Name tag", func() ([]string, error) {
			return groups(&ec2.DescribeSecurityGroupsInput{Filters: tagFilter("Name", "ec2::coinbase/deploy-test::development")})
		}, []string{"sg-000000000000d0001"}, ""},
		{"security group by group-name", func() ([]string, error) {
			return groups(&ec2.DescribeSecurityGroupsInput{GroupNames: []string{"ec2::other/project::development"}})
		}, []string{"sg-000000000000d0002"}, ""},
		{"unknown security group id", func() ([]string, error) {
			return groups(&ec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-0000000000000dead"}})
		}, nil, cloud.CodeGroupNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.call()
			if tt.errCode != "" {
				require.Error(t, err)
				assert.Equal(t, tt.errCode, cloud.ErrorCode(err))
				assert.True(t, cloud.IsNotFoundCode(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreateLaunchTemplate.html
// https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeLaunchTemplates.html
// https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DeleteLaunchTemplate.html
// Names are unique per region; tags come from TagSpecifications of type
// launch-template; a ClientToken makes a repeat return the same template.
func TestLaunchTemplates(t *testing.T) {
	f := newFixture(t)
	data := &ec2types.RequestLaunchTemplateData{ImageId: aws.String(amiOK), InstanceType: ec2types.InstanceTypeT2Nano}
	create := func(name, token string, d *ec2types.RequestLaunchTemplateData, specs ...ec2types.TagSpecification) (*ec2.CreateLaunchTemplateOutput, error) {
		in := &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String(name), LaunchTemplateData: d, TagSpecifications: specs}
		if token != "" {
			in.ClientToken = aws.String(token)
		}
		return f.c.EC2.CreateLaunchTemplate(f.ctx, in)
	}
	tagged := ec2types.TagSpecification{ResourceType: ec2types.ResourceTypeLaunchTemplate,
		Tags: []ec2types.Tag{{Key: aws.String("ReleaseID"), Value: aws.String("r1")}}}

	first, err := create("coinbase/deploy-test/development/web/r1", "tok-1", data, tagged)
	require.NoError(t, err)
	assert.Equal(t, int64(1), *first.LaunchTemplate.LatestVersionNumber)
	assert.Equal(t, "r1", *first.LaunchTemplate.Tags[0].Value)

	tests := []struct {
		name    string
		lt      string
		token   string
		data    *ec2types.RequestLaunchTemplateData
		specs   []ec2types.TagSpecification
		errCode string
	}{
		{"same client token returns the same template", "coinbase/deploy-test/development/web/r1", "tok-1", data, nil, ""},
		{"duplicate name", "coinbase/deploy-test/development/web/r1", "", data, nil, cloud.CodeLaunchTemplateNameAlreadyExists},
		{"malformed name", "a b", "", data, nil, "InvalidLaunchTemplateName.MalformedException"},
		{"missing data", "no-data", "", nil, nil, "MissingParameter"},
		{"user data not base64", "bad-user-data", "", &ec2types.RequestLaunchTemplateData{ImageId: aws.String(amiOK), UserData: aws.String("#!/bin/sh")}, nil, "InvalidUserData.Malformed"},
		{"tags on an instance at the top level", "bad-tags", "", data, []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance}}, "InvalidParameterValue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := create(tt.lt, tt.token, tt.data, tt.specs...)
			if tt.errCode != "" {
				require.Error(t, err)
				assert.Equal(t, tt.errCode, cloud.ErrorCode(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, *first.LaunchTemplate.LaunchTemplateId, *out.LaunchTemplate.LaunchTemplateId)
		})
	}

	got, err := f.c.EC2.DescribeLaunchTemplates(f.ctx, &ec2.DescribeLaunchTemplatesInput{Filters: tagFilter("ReleaseID", "r1")})
	require.NoError(t, err)
	require.Len(t, got.LaunchTemplates, 1)
	_, err = f.c.EC2.DescribeLaunchTemplates(f.ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{"nope"}})
	assert.Equal(t, cloud.CodeLaunchTemplateNameNotFound, cloud.ErrorCode(err))

	_, err = f.c.EC2.DeleteLaunchTemplate(f.ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateId: first.LaunchTemplate.LaunchTemplateId})
	require.NoError(t, err)
	_, err = f.c.EC2.DeleteLaunchTemplate(f.ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateId: first.LaunchTemplate.LaunchTemplateId})
	assert.Equal(t, cloud.CodeLaunchTemplateIDNotFound, cloud.ErrorCode(err))
	_, err = f.c.EC2.DeleteLaunchTemplate(f.ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String("coinbase/deploy-test/development/web/r1")})
	assert.True(t, cloud.IsNotFoundCode(err))
}
