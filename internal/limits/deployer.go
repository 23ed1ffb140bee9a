package limits

import "time"

const (
	// ReleaseObjectRetention is how long the deployer bucket keeps the
	// objects of one release (tagged naming.ObjectTagExpire) before its
	// lifecycle rule expires them.
	ReleaseObjectRetention = 365 * 24 * time.Hour
	// NoncurrentVersionRetention is how long the deployer bucket keeps an
	// overwritten or deleted object version.
	NoncurrentVersionRetention = 30 * 24 * time.Hour
	// DeployerLambdaTimeout bounds one invocation of the deployer Lambda
	// (Publish copies up to MaxAssets assets of MaxAssetBytes).
	DeployerLambdaTimeout = 10 * time.Minute
	// DeployerLambdaMemoryMB is the deployer Lambda's memory size.
	DeployerLambdaMemoryMB = 1024
	// LogRetention is how long the deployer's logs (Lambda and state
	// machine) are kept, for audit.
	LogRetention = 365 * 24 * time.Hour
)
