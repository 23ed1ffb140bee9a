package cloud_test

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"

	"github.com/ferryhq/ferry/internal/naming"
)

type stsInput struct{}

func (stsInput) forRole(account, region string) *sts.AssumeRoleInput {
	return &sts.AssumeRoleInput{
		RoleArn:         aws.String(naming.RoleARN(account, naming.DeployRoleName(account, region, ""))),
		RoleSessionName: aws.String("ferry-test"),
		Tags: []ststypes.Tag{
			{Key: aws.String(naming.TagProjectName), Value: aws.String("coinbase/deploy-test")},
			{Key: aws.String(naming.TagConfigName), Value: aws.String("development")},
		},
	}
}

type staticCreds string

func (s staticCreds) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: string(s), SecretAccessKey: "x", SessionToken: "y"}, nil
}
