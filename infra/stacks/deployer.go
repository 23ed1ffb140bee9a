package stacks

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	sfn "github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/statemachine"
)

// DeployerProps configures the DeployerStack.
type DeployerProps struct {
	awscdk.StackProps
	// LambdaDir is the directory holding the deployer Lambda's `bootstrap`
	// executable (linux/arm64, make build writes build/lambda/bootstrap).
	// Required.
	LambdaDir string
}

// Deployer is the DeployerStack and the resources other code refers to.
type Deployer struct {
	Stack        awscdk.Stack
	Bucket       awss3.Bucket
	Function     awslambda.Function
	StateMachine *statemachine.Deployer
}

// NewDeployerStack defines the deployer. It returns an error, before
// defining anything, when LambdaDir holds no bootstrap file.
func NewDeployerStack(scope constructs.Construct, id string, props *DeployerProps) (*Deployer, error) {
	if props == nil || props.LambdaDir == "" {
		return nil, fmt.Errorf("deployer stack: LambdaDir is required")
	}
	bin := filepath.Join(props.LambdaDir, "bootstrap")
	if st, err := os.Stat(bin); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("deployer stack: the Lambda executable %s is missing: run `make build` first", bin)
	}
	sp := props.StackProps
	if sp.Description == nil {
		sp.Description = jsii.String("ferry deployer: bucket, Lambda and deploy state machine")
	}
	if sp.AnalyticsReporting == nil {
		sp.AnalyticsReporting = jsii.Bool(false)
	}
	stack := awscdk.NewStack(scope, jsii.String(id), &sp)
	str := jsii.String
	days := func(d float64) awscdk.Duration { return awscdk.Duration_Days(jsii.Number(d)) }

	bucket := awss3.NewBucket(stack, str("Bucket"), &awss3.BucketProps{
		BucketName:        str(naming.DeployerBucketName(*awscdk.Aws_ACCOUNT_ID(), *awscdk.Aws_REGION())),
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		Versioned:         jsii.Bool(true),
		EnforceSSL:        jsii.Bool(true),
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		RemovalPolicy:     awscdk.RemovalPolicy_RETAIN,
		LifecycleRules: &[]*awss3.LifecycleRule{
			{
				Id:                          str("expire-release-objects"),
				TagFilters:                  &map[string]interface{}{naming.ObjectTagExpire: naming.ObjectTagExpireRelease},
				Expiration:                  days(limits.ReleaseObjectRetention.Hours() / 24),
				NoncurrentVersionExpiration: days(limits.NoncurrentVersionRetention.Hours() / 24),
			},
			{
				Id:                                  str("expire-noncurrent-versions"),
				NoncurrentVersionExpiration:         days(limits.NoncurrentVersionRetention.Hours() / 24),
				ExpiredObjectDeleteMarker:           jsii.Bool(true),
				AbortIncompleteMultipartUploadAfter: days(1),
			},
		},
	})

	logRetention := awslogs.RetentionDays_ONE_YEAR
	fnLogs := awslogs.NewLogGroup(stack, str("FunctionLogs"), &awslogs.LogGroupProps{
		Retention:     logRetention,
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	fn := awslambda.NewFunction(stack, str("Function"), &awslambda.FunctionProps{
		FunctionName:  str(naming.DeployerFunctionName),
		Description:   str("ferry deployer: runs every task of the deploy state machine"),
		Runtime:       awslambda.Runtime_PROVIDED_AL2023(),
		Architecture:  awslambda.Architecture_ARM_64(),
		Handler:       str("bootstrap"),
		Code:          awslambda.Code_FromAsset(str(props.LambdaDir), nil),
		MemorySize:    jsii.Number(limits.DeployerLambdaMemoryMB),
		Timeout:       awscdk.Duration_Seconds(jsii.Number(limits.DeployerLambdaTimeout.Seconds())),
		LogGroup:      fnLogs,
		LoggingFormat: awslambda.LoggingFormat_JSON,
		// The deployer's own account and region are its default target;
		// naming them here spares the Lambda an STS call at cold start.
		Environment: &map[string]*string{
			naming.EnvDeployerBucket: bucket.BucketName(),
			naming.EnvAccountID:      awscdk.Aws_ACCOUNT_ID(),
			naming.EnvRegion:         awscdk.Aws_REGION(),
		},
	})

	// S3: its own bucket only, and an explicit deny everywhere else, so no
	// grant added later can widen it. Publishing into target asset buckets
	// goes through the assumed publish role, which this deny does not reach.
	bucketResources := &[]*string{bucket.BucketArn(), bucket.ArnForObjects(str("*"))}
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       str("DeployerBucketOnly"),
		Effect:    awsiam.Effect_ALLOW,
		Actions:   jsii.Strings("s3:GetObject*", "s3:PutObject*", "s3:List*", "s3:DeleteObject*"),
		Resources: bucketResources,
	}))
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:          str("DenyOtherBuckets"),
		Effect:       awsiam.Effect_DENY,
		Actions:      jsii.Strings("s3:*"),
		NotResources: bucketResources,
	}))
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       str("AssumeFerryRoles"),
		Effect:    awsiam.Effect_ALLOW,
		Actions:   jsii.Strings("sts:AssumeRole"),
		Resources: AssumableRoleARNs(),
	}))

	smLogs := awslogs.NewLogGroup(stack, str("StateMachineLogs"), &awslogs.LogGroupProps{
		LogGroupName:  str(naming.StateMachineLogGroupName),
		Retention:     logRetention,
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	sm := statemachine.New(stack, "Deployer", &statemachine.Props{
		Function:         fn,
		StateMachineName: naming.StateMachineName,
		// The local region's DescribeStateMachine reports the same
		// configuration, from the same constants.
		Logs: &sfn.LogOptions{
			Destination:          smLogs,
			Level:                sfn.LogLevel(limits.StateMachineLogLevel),
			IncludeExecutionData: jsii.Bool(limits.StateMachineLogExecutionData),
		},
		Tracing: limits.StateMachineTracing,
	})

	awscdk.NewCfnOutput(stack, str(naming.OutputStateMachineArn), &awscdk.CfnOutputProps{
		Value:       sm.StateMachine.StateMachineArn(),
		Description: str("The deploy state machine (ferry deploy starts executions of it)"),
	})
	awscdk.NewCfnOutput(stack, str(naming.OutputBucketName), &awscdk.CfnOutputProps{
		Value:       bucket.BucketName(),
		Description: str("The deployer bucket (releases, locks, halt markers, assets)"),
	})
	return &Deployer{Stack: stack, Bucket: bucket, Function: fn, StateMachine: sm}, nil
}

// AssumableRoleARNs are the ARNs (with wildcards) of the roles the deployer
// Lambda may assume: ferry's deploy and publish roles in any account,
// from naming.AssumableRoleNamePatterns.
func AssumableRoleARNs() *[]*string {
	var out []*string
	for _, p := range naming.AssumableRoleNamePatterns() {
		out = append(out, jsii.String("arn:"+*awscdk.Aws_PARTITION()+":iam::*:role/"+p))
	}
	return &out
}
