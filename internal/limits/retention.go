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
)
