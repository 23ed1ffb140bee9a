package cloud_test

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/ferryhq/ferry/internal/naming"
)

type stsInput struct{}

func (stsInput) forRole(account, region string) *sts.AssumeRoleInput {
	return &sts.AssumeRoleInput{
		RoleArn:         aws.String(naming.RoleARN(account, naming.DeployRoleName(account, region, ""))),
		RoleSessionName: aws.String("ferry-test"),
	}
}

type staticCreds string

func (s staticCreds) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: string(s), SecretAccessKey: "x", SessionToken: "y"}, nil
}
