package naming

// Names of the deployer's own resources (the DeployerStack of infra/) and of
// the stack outputs the client reads. Binaries that must not link the CDK
// import them from here.
const (
	// DeployerStackName is the CloudFormation stack of the deployer.
	DeployerStackName = "ferry-deployer"
	// BootstrapStackName is the stack (or StackSet) that bootstraps a
	// target environment.
	BootstrapStackName = "ferry-bootstrap"
	// StateMachineName is the physical name of the deploy state machine, so
	// its ARN is conventional: arn:aws:states:REGION:ACCOUNT:stateMachine:ferry-deployer.
	StateMachineName = "ferry-deployer"
	// DeployerFunctionName is the physical name of the deployer Lambda.
	DeployerFunctionName = "ferry-deployer"
	// StateMachineLogGroupName is the CloudWatch Logs group the deploy
	// state machine logs its executions to.
	StateMachineLogGroupName = "/aws/vendedlogs/states/" + StateMachineName

	// OutputStateMachineArn and OutputBucketName are the DeployerStack's
	// outputs: the state machine's ARN and the deployer bucket's name.
	OutputStateMachineArn = "StateMachineArn"
	OutputBucketName      = "BucketName"

	// EnvDeployerBucket is the environment variable that gives the deployer
	// Lambda the name of its bucket (parsed by the Lambda's main only).
	EnvDeployerBucket = "FERRY_DEPLOYER_BUCKET"

	// ObjectTagExpire is the S3 object tag whose value
	// ObjectTagExpireRelease marks an object of one release (release.json,
	// rendered user data, outcome, run-once marker): the deployer bucket's
	// lifecycle rule expires tagged objects after tuning.ReleaseObjectRetention.
	// Untagged objects (locks, halt markers, current records, assets) are
	// kept.
	ObjectTagExpire        = "ferry-expire"
	ObjectTagExpireRelease = "release"
)

// StateMachineARN is the ARN of the deploy state machine in an account and
// region (partition aws).
func StateMachineARN(account, region string) string {
	return "arn:aws:states:" + region + ":" + account + ":stateMachine:" + StateMachineName
}

// ReleaseObjectTagging is the x-amz-tagging value (PutObjectInput.Tagging)
// of every object of one release: ObjectTagExpire=ObjectTagExpireRelease.
func ReleaseObjectTagging() string { return ObjectTagExpire + "=" + ObjectTagExpireRelease }

// LogGroupARN is the ARN of the CloudWatch Logs group name in an account
// and region (partition aws) as CloudFormation's Fn::GetAtt Arn of an
// AWS::Logs::LogGroup reports it, and as Step Functions takes a log
// destination: ending in ":*" (all of the group's streams).
func LogGroupARN(account, region, name string) string {
	return "arn:aws:logs:" + region + ":" + account + ":log-group:" + name + ":*"
}
