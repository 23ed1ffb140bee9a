package tuning

import "time"

// Limits of ferry's calls to AWS (package cloud).
const (
	// AWSMaxAttempts is how many times the SDK's standard retryer tries one
	// call (the first attempt included) when AWS throttles or fails with a
	// 5xx. Validation and access errors are never retried.
	AWSMaxAttempts = 3
	// AWSRetryTokens is the retry budget of one target environment: the
	// size of the token bucket every client of the target shares. A retry
	// costs 5 tokens (a timeout 10), a success refunds 1; when the bucket
	// is empty failures are returned at once instead of retried.
	AWSRetryTokens = 100
	// RoleSessionDuration is how long the credentials of an assumed deploy
	// or publish role last.
	RoleSessionDuration = time.Hour
	// CredentialsExpiryWindow is how long before they expire assumed-role
	// credentials are refreshed.
	CredentialsExpiryWindow = 5 * time.Minute
	// MaxCachedConnections is how many (target, release) connections a
	// Connector keeps, the least recently used dropped first: a release's
	// roles are assumed for it alone, so a long-lived Lambda container
	// would otherwise keep every release's clients.
	MaxCachedConnections = 64
)
