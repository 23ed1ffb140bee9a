package naming

import "strings"

// TopicARN is the ARN of an SNS topic named ref in an account and region
// (partition aws); a ref that is already an ARN is returned as is.
func TopicARN(region, account, ref string) string {
	if strings.HasPrefix(ref, "arn:") {
		return ref
	}
	return "arn:aws:sns:" + region + ":" + account + ":" + ref
}

// RoleNameOf is the name of the IAM role a release names by name or ARN
// (the last path segment of an ARN).
func RoleNameOf(ref string) string {
	if strings.HasPrefix(ref, "arn:") {
		return ref[strings.LastIndex(ref, "/")+1:]
	}
	return ref
}

// S3URL is the s3:// URL of an object, as user data names a published
// asset ({{ASSET_URL:name}}).
func S3URL(bucket, key string) string { return "s3://" + bucket + "/" + key }

// GroupPrefix is the prefix of the name of every ASG, launch template and
// alarm of a project-config (see GroupName and AlarmName).
func GroupPrefix(project, config string) string { return project + "/" + config + "/" }

// Environment variables of the deployer Lambda besides EnvDeployerBucket
// (parsed by the Lambda's main only). Durations are Go durations ("10m").
const (
	// EnvAccountID is the deployer's own account id (the default target);
	// when unset the Lambda asks STS.
	EnvAccountID = "FERRY_ACCOUNT_ID"
	// EnvRegion is the deployer's own region (the default target); when
	// unset, AWS_REGION.
	EnvRegion = "FERRY_REGION"
	// EnvQualifier is the bootstrap qualifier of the default target.
	EnvQualifier = "FERRY_QUALIFIER"
	// EnvCreatedAtMaxAge and EnvCreatedAtMaxSkew override the created_at
	// window Validate accepts.
	EnvCreatedAtMaxAge  = "FERRY_CREATED_AT_MAX_AGE"
	EnvCreatedAtMaxSkew = "FERRY_CREATED_AT_MAX_SKEW"
	// EnvHealthCheckInterval overrides the health checks' first interval
	// (deployer.Config.HealthCheckInterval).
	EnvHealthCheckInterval = "FERRY_HEALTH_CHECK_INTERVAL"
	// EnvLogLevel is the Lambda's log level (debug, info, warn, error).
	EnvLogLevel = "FERRY_LOG_LEVEL"
	// EnvAssetKeepReleases is how many of a project-config's newest
	// releases keep their assets at a reconcile pass
	// (deployer.Config.KeepReleases): a positive whole number.
	EnvAssetKeepReleases = "FERRY_ASSET_KEEP_RELEASES"
	// EnvIdentityAccounts are the accounts, comma-separated 12-digit ids,
	// whose principals' identity proofs the deployer accepts
	// (deployer.Config.IdentityAccounts); when unset, its own account.
	EnvIdentityAccounts = "FERRY_IDENTITY_ACCOUNTS"
)
