// Package identity owns who asked for a release. The client proves its AWS
// identity with a pre-signed sts:GetCallerIdentity request whose signed
// headers bind it to the release (Prove); the deployer replays that
// request to STS and takes the caller STS names as the release's author
// (Verifier.Verify). It is the pattern of Vault's AWS auth method and of
// aws-iam-authenticator: the deployer learns who signed without ever
// holding the caller's credentials, and nobody can claim another's name,
// since STS checks the signature and the binding header is signed.
//
// What a proof may point at is bounded: only STS endpoints of AWS
// (https, sts[.REGION].amazonaws.com[.cn]) unless the verifier is given
// another endpoint check (the local region), so a release can never make
// the deployer call an address of the release's choosing.
package identity
