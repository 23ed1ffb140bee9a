package stacks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsscheduler"
	sfn "github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/tuning"
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
//
// The parts, in the order they are defined (which is the template's
// order): the deployer bucket (deployerBucket), the parameters and
// conditions (newDeployerParams), the Lambda and its role
// (deployerFunction), the Lambda's policy (grantDeployer), the bucket's
// policy (guardState), the state machine (deployStateMachine), the
// reconcile schedule (reconcileSchedule) and the outputs.
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
	bucket := deployerBucket(stack)
	p := newDeployerParams(stack)
	fn, role := deployerFunction(stack, props.LambdaDir, bucket, p.keepReleases)
	grantDeployer(fn, bucket, p)
	guardState(stack, bucket, role.RoleArn(), p.unlockers)
	sm := deployStateMachine(stack, fn)
	if err := reconcileSchedule(stack, sm.StateMachine, p.reconcileRate); err != nil {
		return nil, err
	}

	awscdk.NewCfnOutput(stack, jsii.String(naming.OutputStateMachineArn), &awscdk.CfnOutputProps{
		Value:       sm.StateMachine.StateMachineArn(),
		Description: jsii.String("The deploy state machine (ferry deploy starts executions of it)"),
	})
	awscdk.NewCfnOutput(stack, jsii.String(naming.OutputBucketName), &awscdk.CfnOutputProps{
		Value:       bucket.BucketName(),
		Description: jsii.String("The deployer bucket (releases, locks, halt markers, assets)"),
	})
	return &Deployer{Stack: stack, Bucket: bucket, Function: fn, StateMachine: sm}, nil
}

// deployerBucket is the deployer bucket: versioned, private, encrypted,
// retained; release objects and old versions expire
// (tuning.ReleaseObjectRetention, NoncurrentVersionRetention).
func deployerBucket(stack awscdk.Stack) awss3.Bucket {
	days := func(d float64) awscdk.Duration { return awscdk.Duration_Days(jsii.Number(d)) }
	return awss3.NewBucket(stack, jsii.String("Bucket"), &awss3.BucketProps{
		BucketName:        jsii.String(naming.DeployerBucketName(*awscdk.Aws_ACCOUNT_ID(), *awscdk.Aws_REGION())),
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		Versioned:         jsii.Bool(true),
		EnforceSSL:        jsii.Bool(true),
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		RemovalPolicy:     awscdk.RemovalPolicy_RETAIN,
		LifecycleRules: &[]*awss3.LifecycleRule{
			{
				Id:                          jsii.String("expire-release-objects"),
				TagFilters:                  &map[string]interface{}{naming.ObjectTagExpire: naming.ObjectTagExpireRelease},
				Expiration:                  days(tuning.ReleaseObjectRetention.Hours() / 24),
				NoncurrentVersionExpiration: days(tuning.NoncurrentVersionRetention.Hours() / 24),
			},
			{
				// Start markers matter for a few minutes (the deploys
				// starting beside them take turns by them), and until
				// tuning.UnderwayHorizon at most (retirements give way
				// to the deploys on their way); their deploys clear them.
				Id:                          jsii.String("expire-start-markers"),
				Prefix:                      jsii.String(naming.StartsRoot),
				Expiration:                  days(1),
				NoncurrentVersionExpiration: days(1),
			},
			{
				// Turns matter for the seconds they name; a step that
				// takes its turn deletes the ones it gave up.
				Id:                          jsii.String("expire-turns"),
				Prefix:                      jsii.String(naming.TurnsRoot),
				Expiration:                  days(1),
				NoncurrentVersionExpiration: days(1),
			},
			{
				Id:                                  jsii.String("expire-noncurrent-versions"),
				NoncurrentVersionExpiration:         days(tuning.NoncurrentVersionRetention.Hours() / 24),
				ExpiredObjectDeleteMarker:           jsii.Bool(true),
				AbortIncompleteMultipartUploadAfter: days(1),
			},
		},
	})
}

// deployerParams are the DeployerStack's parameters and the condition on
// its target accounts.
type deployerParams struct {
	targets, unlockers, reconcileRate, keepReleases awscdk.CfnParameter
	hasTargets                                      awscdk.CfnCondition
}

// newDeployerParams defines the parameters of stack.
func newDeployerParams(stack awscdk.Stack) *deployerParams {
	str := jsii.String
	p := &deployerParams{}
	p.targets = awscdk.NewCfnParameter(stack, str(ParamTargetAccounts), &awscdk.CfnParameterProps{
		Type:           str("CommaDelimitedList"),
		Default:        str(""),
		AllowedPattern: str("^([0-9]{12})?$"),
		Description:    str("The accounts this deployer deploys into (12-digit account ids; empty: its own account only). It may assume ferry's deploy and publish roles there and nowhere else"),
	})
	p.unlockers = awscdk.NewCfnParameter(stack, str(ParamUnlockPrincipals), &awscdk.CfnParameterProps{
		Type:           str("CommaDelimitedList"),
		Default:        str(""),
		AllowedPattern: str(UnlockPrincipalPattern),
		Description:    str("ARNs of the roles or users allowed to run `ferry unlock`: to delete a project-config's lock (" + naming.StatePrefix + "<project>/<config>/lock). Nobody else but the deployer may write or delete under " + naming.StatePrefix),
	})
	p.reconcileRate = awscdk.NewCfnParameter(stack, str(ParamReconcileRate), &awscdk.CfnParameterProps{
		Type:           str("String"),
		Default:        str(DefaultReconcileRate),
		AllowedPattern: str(`^rate\([1-9][0-9]* (minute|minutes|hour|hours|day|days)\)$`),
		Description:    str("How often EventBridge Scheduler starts a reconcile pass (a rate expression): drift recorded for every project-config, fleets of releases with \"reconcile\": \"heal\" healed"),
	})
	p.keepReleases = awscdk.NewCfnParameter(stack, str(ParamAssetKeepReleases), &awscdk.CfnParameterProps{
		Type:        str("Number"),
		Default:     jsii.Number(tuning.AssetKeepReleases),
		MinValue:    jsii.Number(1),
		Description: str("How many of each project-config's newest releases keep their assets in the deployer bucket: a reconcile pass deletes the assets none of them (nor a running deploy) names, once a day old"),
	})
	p.hasTargets = awscdk.NewCfnCondition(stack, str(ConditionHasTargetAccounts), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(awscdk.Fn_Join(str(""), p.targets.ValueAsList()), str(""))),
	})
	return p
}

// deployerLogRetention is how long the Lambda's and the state machine's
// logs are kept.
const deployerLogRetention = awslogs.RetentionDays_ONE_YEAR

// deployerFunction is the deployer Lambda, from the bootstrap executable in
// lambdaDir, and its role. The role has a conventional name, which the
// bootstrap roles of every target trust (and nothing else of this
// account).
func deployerFunction(stack awscdk.Stack, lambdaDir string, bucket awss3.Bucket, keepReleases awscdk.CfnParameter) (awslambda.Function, awsiam.Role) {
	str := jsii.String
	role := awsiam.NewRole(stack, str("FunctionRole"), &awsiam.RoleProps{
		RoleName:    str(naming.DeployerRoleName(*awscdk.Aws_REGION())),
		Description: str("ferry deployer: the Lambda's role, the only principal ferry's bootstrap roles trust"),
		// Lambda documents no aws:SourceArn for an execution role's trust:
		// aws:SourceAccount alone scopes it (serviceTrustConditions).
		AssumedBy: awsiam.NewServicePrincipal(str("lambda.amazonaws.com"), &awsiam.ServicePrincipalOpts{
			Conditions: serviceTrustConditions(nil),
		}),
		ManagedPolicies: &[]awsiam.IManagedPolicy{
			awsiam.ManagedPolicy_FromAwsManagedPolicyName(str("service-role/AWSLambdaBasicExecutionRole")),
		},
	})
	fnLogs := awslogs.NewLogGroup(stack, str("FunctionLogs"), &awslogs.LogGroupProps{
		Retention:     deployerLogRetention,
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	fn := awslambda.NewFunction(stack, str("Function"), &awslambda.FunctionProps{
		FunctionName:  str(naming.DeployerFunctionName),
		Description:   str("ferry deployer: runs every task of the deploy state machine"),
		Runtime:       awslambda.Runtime_PROVIDED_AL2023(),
		Architecture:  awslambda.Architecture_ARM_64(),
		Handler:       str("bootstrap"),
		Code:          awslambda.Code_FromAsset(str(lambdaDir), nil),
		MemorySize:    jsii.Number(tuning.DeployerLambdaMemoryMB),
		Timeout:       awscdk.Duration_Seconds(jsii.Number(tuning.DeployerLambdaTimeout.Seconds())),
		LogGroup:      fnLogs,
		LoggingFormat: awslambda.LoggingFormat_JSON,
		Role:          role,
		// The deployer's own account and region are its default target;
		// naming them here spares the Lambda an STS call at cold start.
		Environment: &map[string]*string{
			naming.EnvDeployerBucket:    bucket.BucketName(),
			naming.EnvAccountID:         awscdk.Aws_ACCOUNT_ID(),
			naming.EnvRegion:            awscdk.Aws_REGION(),
			naming.EnvAssetKeepReleases: keepReleases.ValueAsString(),
		},
	})
	return fn, role
}

// grantDeployer is the Lambda's policy.
//
// S3: the exact actions the deployer's stores call on its own bucket
// (GetObject also authorizes HeadObject, ListBucket ListObjectsV2;
// PutObjectTagging is needed for a PutObject with x-amz-tagging, the
// release objects' expiry tag), and an explicit deny everywhere else, so
// no grant added later can widen it. Publishing into target asset buckets
// goes through the assumed publish role, which this deny does not reach.
func grantDeployer(fn awslambda.Function, bucket awss3.Bucket, p *deployerParams) {
	str := jsii.String
	bucketResources := &[]*string{bucket.BucketArn(), bucket.ArnForObjects(str("*"))}
	allow := func(sid string, actions []string, resources ...*string) {
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid: str(sid), Effect: awsiam.Effect_ALLOW, Actions: jsii.Strings(actions...), Resources: &resources,
		}))
	}
	allow("DeployerBucketObjects", DeployerObjectActions, bucket.ArnForObjects(str("*")))
	allow("DeployerBucketList", []string{"s3:ListBucket"}, bucket.BucketArn())
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:          str("DenyOtherBuckets"),
		Effect:       awsiam.Effect_DENY,
		Actions:      jsii.Strings("s3:*"),
		NotResources: bucketResources,
	}))
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		// The deployer never erases history, changes ACLs or locks
		// objects: the bucket is versioned so that nothing it does is lost.
		Sid:    str("NeverEraseHistory"),
		Effect: awsiam.Effect_DENY,
		Actions: jsii.Strings("s3:DeleteObjectVersion", "s3:PutObjectAcl", "s3:PutObjectVersionAcl",
			"s3:PutObjectRetention", "s3:PutObjectLegalHold", "s3:BypassGovernanceRetention", "s3:PutBucketPolicy",
			"s3:DeleteBucketPolicy", "s3:PutBucketVersioning", "s3:PutLifecycleConfiguration"),
		Resources: bucketResources,
	}))
	// STS: ferry's deploy and publish roles in the accounts it serves
	// only, with the session tags the bootstrap roles require and the
	// source identity of who asked for the release.
	for _, kind := range []string{"Deploy", "Publish"} {
		allow("AssumeFerry"+kind+"Roles", []string{"sts:AssumeRole", "sts:TagSession", "sts:SetSourceIdentity"}, TargetRoleARNs(p.targets, p.hasTargets, kind)...)
	}
	// Step Functions: the handlers confirm that they run for an execution
	// of this state machine. The ARN is built from naming, not from the
	// state machine, which depends on the function.
	allow("DescribeOwnExecutions", []string{"states:DescribeExecution"},
		str("arn:"+*awscdk.Aws_PARTITION()+":states:"+*awscdk.Aws_REGION()+":"+*awscdk.Aws_ACCOUNT_ID()+":execution:"+naming.StateMachineName+":*"))
	// A reconcile pass starts heals: executions of this state machine.
	allow("StartOwnExecutions", []string{"states:StartExecution"}, str(StateMachineARN()))
}

// guardState adds the deployer bucket's policy: under naming.StatePrefix
// only the Lambda's role (lambdaRole) writes, deletes, tags or replicates
// (StateObjectWrites: a client that may write its project's prefix can
// neither forge a record nor take, move, hide or expire a lock); the
// operators of UnlockPrincipals may delete locks, and nothing else there;
// a release is written once.
func guardState(stack awscdk.Stack, bucket awss3.Bucket, lambdaRole *string, unlockers awscdk.CfnParameter) {
	str := jsii.String
	deny := func(sid string, actions []string, resources []*string, principalNot interface{}) {
		bucket.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        str(sid),
			Effect:     awsiam.Effect_DENY,
			Principals: &[]awsiam.IPrincipal{awsiam.NewAnyPrincipal()},
			Actions:    jsii.Strings(actions...),
			Resources:  &resources,
			Conditions: &map[string]interface{}{"ArnNotEquals": map[string]interface{}{"aws:PrincipalArn": principalNot}},
		}))
	}
	stateObjects := bucket.ArnForObjects(str(naming.StatePrefix + "*"))
	deny("OnlyTheDeployerWritesState", stateWriteActions(false), []*string{stateObjects}, lambdaRole)
	hasUnlockers := awscdk.NewCfnCondition(stack, str(ConditionHasUnlockPrincipals), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(awscdk.Fn_Join(str(""), unlockers.ValueAsList()), str(""))),
	})
	deny("OnlyTheDeployerAndUnlockersDeleteState", []string{"s3:DeleteObject"}, []*string{stateObjects}, arnList(lambdaRole, unlockers, hasUnlockers))
	// A release is written once (If-None-Match: *, condition key
	// s3:if-none-match): nobody, the deployer included, replaces one.
	// CopyObject and multipart uploads send no If-None-Match and are
	// refused too (S3 User Guide, "Enforce conditional writes on Amazon S3
	// buckets"); ferry uses neither for releases.
	bucket.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        str("ReleasesAreWriteOnce"),
		Effect:     awsiam.Effect_DENY,
		Principals: &[]awsiam.IPrincipal{awsiam.NewAnyPrincipal()},
		Actions:    jsii.Strings("s3:PutObject"),
		Resources:  &[]*string{bucket.ArnForObjects(str(ReleaseObjectPattern))},
		Conditions: &map[string]interface{}{"StringNotEquals": map[string]interface{}{"s3:if-none-match": "*"}},
	}))
	_, others := naming.StateKeyPatterns()
	var otherRecords []*string
	for _, p := range others {
		otherRecords = append(otherRecords, bucket.ArnForObjects(str(p)))
	}
	deny("UnlockersDeleteOnlyLocks", []string{"s3:DeleteObject"}, otherRecords, lambdaRole)
}

// deployStateMachine is the deploy state machine (package statemachine)
// running fn, with its log group, its role's conventional name and trust,
// and the function's resource policy letting it alone invoke fn.
func deployStateMachine(stack awscdk.Stack, fn awslambda.Function) *statemachine.Deployer {
	str := jsii.String
	smLogs := awslogs.NewLogGroup(stack, str("StateMachineLogs"), &awslogs.LogGroupProps{
		LogGroupName:  str(naming.StateMachineLogGroupName),
		Retention:     deployerLogRetention,
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	sm := statemachine.New(stack, "Deployer", &statemachine.Props{
		Function:         fn,
		StateMachineName: naming.StateMachineName,
		// The local region's DescribeStateMachine reports the same
		// configuration, from the same constants.
		Logs: &sfn.LogOptions{
			Destination:          smLogs,
			Level:                sfn.LogLevel(tuning.StateMachineLogLevel),
			IncludeExecutionData: jsii.Bool(tuning.StateMachineLogExecutionData),
		},
		Tracing: tuning.StateMachineTracing,
	})

	// The state machine's role has a conventional name too, so a service
	// control policy can name the one principal that may invoke the
	// function.
	smRole := sm.StateMachine.Role().Node().DefaultChild().(awsiam.CfnRole)
	smRole.SetRoleName(str(naming.StateMachineRoleName(*awscdk.Aws_REGION())))
	// Step Functions assumes it for this state machine only (Step Functions
	// Developer Guide, "Creating an IAM role for your state machine":
	// "Prevent cross-service confused deputy issue").
	smRole.SetAssumeRolePolicyDocument(serviceTrust("states.amazonaws.com", str(StateMachineARN())))

	// Only Step Functions, for this state machine, may invoke the function
	// by its resource policy. Step Functions invokes it with the state
	// machine's role (an identity-based grant), and an administrator of
	// this account can too: the security help page gives the SCP
	// that closes direct invokes.
	awslambda.NewCfnPermission(stack, str("InvokedByTheStateMachineOnly"), &awslambda.CfnPermissionProps{
		Action:        str("lambda:InvokeFunction"),
		FunctionName:  fn.FunctionArn(),
		Principal:     str("states.amazonaws.com"),
		SourceArn:     sm.StateMachine.StateMachineArn(),
		SourceAccount: awscdk.Aws_ACCOUNT_ID(),
	})
	return sm
}

// reconcileSchedule has EventBridge Scheduler start a reconcile pass
// ({"reconcile_pass": {}}) of sm at rate, as a role that may start
// executions of sm and nothing else.
func reconcileSchedule(stack awscdk.Stack, sm sfn.StateMachine, rate awscdk.CfnParameter) error {
	str := jsii.String
	input, err := json.Marshal(execution.ReconcileInput{})
	if err != nil {
		return err
	}
	role := awsiam.NewRole(stack, str("ReconcileScheduleRole"), &awsiam.RoleProps{
		RoleName:    str(naming.ReconcileScheduleRoleName(*awscdk.Aws_REGION())),
		Description: str("ferry deployer: EventBridge Scheduler starts the reconcile passes"),
		// EventBridge Scheduler User Guide, "Set up the execution role":
		// aws:SourceAccount and the schedule group's aws:SourceArn (the
		// schedule is in the default group).
		AssumedBy: awsiam.NewServicePrincipal(str("scheduler.amazonaws.com"), &awsiam.ServicePrincipalOpts{
			Conditions: serviceTrustConditions(str("arn:" + *awscdk.Aws_PARTITION() + ":scheduler:" + *awscdk.Aws_REGION() + ":" +
				*awscdk.Aws_ACCOUNT_ID() + ":schedule-group/default")),
		}),
	})
	sm.GrantStartExecution(role)
	awsscheduler.NewCfnSchedule(stack, str("ReconcileSchedule"), &awsscheduler.CfnScheduleProps{
		Description:        str("ferry: a reconcile pass of every project-config"),
		ScheduleExpression: rate.ValueAsString(),
		FlexibleTimeWindow: &awsscheduler.CfnSchedule_FlexibleTimeWindowProperty{Mode: str("OFF")},
		Target: &awsscheduler.CfnSchedule_TargetProperty{
			Arn:     sm.StateMachineArn(),
			RoleArn: role.RoleArn(),
			Input:   str(string(input)),
		},
	})
	return nil
}

// Parameters and conditions of the DeployerStack.
const (
	// ParamReconcileRate is how often the reconcile schedule starts a
	// pass (a rate expression, default DefaultReconcileRate).
	ParamReconcileRate = "ReconcileRate"
	// ParamAssetKeepReleases is how many newest releases of each
	// project-config keep their assets (default tuning.AssetKeepReleases).
	ParamAssetKeepReleases = "AssetKeepReleases"
	// ParamTargetAccounts lists the accounts the deployer deploys into:
	// its Lambda may assume ferry's roles there only (default: its own
	// account).
	ParamTargetAccounts = "TargetAccounts"
	// ParamUnlockPrincipals lists the ARNs of the principals that may
	// delete locks (`ferry unlock`).
	ParamUnlockPrincipals = "UnlockPrincipals"
	// ConditionHasTargetAccounts is true when TargetAccounts is not empty.
	ConditionHasTargetAccounts = "HasTargetAccounts"
	// ConditionHasUnlockPrincipals is true when UnlockPrincipals is not
	// empty.
	ConditionHasUnlockPrincipals = "HasUnlockPrincipals"
	// UnlockPrincipalPattern is the AllowedPattern of each UnlockPrincipals
	// value: the ARN of an IAM role or user, or nothing (the default).
	UnlockPrincipalPattern = `^(arn:aws[a-z-]*:iam::[0-9]{12}:(role|user)/[A-Za-z0-9+=.@_/-]+)?$`
)

// DefaultReconcileRate is ParamReconcileRate's default: tuning.ReconcileEvery.
var DefaultReconcileRate = fmt.Sprintf("rate(%d minutes)", int(tuning.ReconcileEvery.Minutes()))

// DeployerObjectActions are the S3 object actions the deployer Lambda may
// take on its own bucket: exactly what its stores call (HeadObject is
// GetObject; a PutObject with x-amz-tagging also needs PutObjectTagging).
// Never DeleteObjectVersion, ACLs or a wildcard.
var DeployerObjectActions = []string{"s3:GetObject", "s3:PutObject", "s3:PutObjectTagging", "s3:DeleteObject"}

// TargetRoleARNs are the ARN patterns of ferry's bootstrap roles of one
// kind ("Deploy" or "Publish": naming.DeployRoleName and PublishRoleName,
// with and without a qualifier) in the target accounts: those of
// TargetAccounts, or the deployer's own account when it is empty. An
// Fn::Join delimiter must be a literal, so the partition is "*" (account
// ids are unique across partitions).
func TargetRoleARNs(targets awscdk.CfnParameter, hasTargets awscdk.CfnCondition, kind string) []*string {
	pattern := naming.PublishRoleName("*", "*", "*")
	if kind == "Deploy" {
		pattern = naming.DeployRoleName("*", "*", "*")
	}
	// "ferry-*-deploy-*-*" matches unqualified names too once the
	// qualifier's "*-" may be empty: "ferry-*deploy-*".
	pattern = strings.Replace(pattern, "ferry-*-", "ferry-*", 1)
	listed := awscdk.Fn_Split(jsii.String(","), awscdk.Fn_Join(jsii.String(""), &[]*string{
		jsii.String("arn:*:iam::"),
		awscdk.Fn_Join(jsii.String(":role/"+pattern+",arn:*:iam::"), targets.ValueAsList()),
		jsii.String(":role/" + pattern),
	}), nil)
	own := "arn:" + *awscdk.Aws_PARTITION() + ":iam::" + *awscdk.Aws_ACCOUNT_ID() + ":role/" + pattern
	return []*string{awscdk.Token_AsString(awscdk.Fn_ConditionIf(hasTargets.LogicalId(), listed, []string{own}), nil)}
}
