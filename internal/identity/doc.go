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
//
// The proof is the method, URL and signed headers of the request, with the
// header X-Ferry-Release-Sha256 (the release's canonical hash without the
// proof) among the signed headers. What a proof is bound to is the
// verifier's decision: it sends STS the hash it computed itself as that
// header's value, never the proof's, and refuses a proof that gives any
// header name twice (in any case) or any query parameter twice, so the
// request checked is the request sent. It holds no secret and expires
// with the signature (15 minutes). A release without a proof, with a proof bound to
// another release, or one STS refuses, is a BadReleaseError. The verified
// caller's full ARN and unique id (GetCallerIdentity's UserId) are written
// in the run-once marker and are the created_by and created_by_id of the
// outcome and of the current record; the name the client gave itself
// ($FERRY_CREATED_BY, else $USER) is created_by_name. Which accounts'
// callers count is the deployer's decision (deployer.Config.
// IdentityAccounts). The local region verifies the same way against its
// own STS, which checks the signature and expiry of proofs signed with its
// one caller's key (arn:aws:iam::ACCOUNT:user/ferry-local, sim.ProofSTS).
package identity
