package ledger

import (
	"context"
	"fmt"

	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// ReleaseHash is the record of a release's canonical hash
// (release.Hash) as Validate accepted it (naming.ReleaseHashKey): what
// ran, whatever release.json, under the client's prefix, says later.
type ReleaseHash struct {
	ReleaseID     string `json:"release_id"`
	ReleaseSHA256 string `json:"release_sha256"`
	// Execution is the execution whose Validate wrote the record.
	Execution string `json:"execution"`
}

// RecordReleaseHash writes the record of h.ReleaseID's hash, once
// (If-None-Match: *). A record already there with the same hash is
// accepted (a retried Validate); one with another hash is a
// *failure.BadReleaseError naming both: the release changed after a
// Validate accepted it.
func (l *Ledger) RecordReleaseHash(ctx context.Context, project, config string, h ReleaseHash) error {
	got, _, err := createOnce(ctx, l, naming.ReleaseHashKey(project, config, h.ReleaseID), h)
	if err != nil {
		return err
	}
	if got.ReleaseSHA256 != h.ReleaseSHA256 {
		return changedRelease(h.ReleaseID, got.ReleaseSHA256, h.ReleaseSHA256)
	}
	return nil
}

// changedRelease is the error of a release whose content is not the
// content the deployer recorded for it.
func changedRelease(releaseID, recorded, got string) error {
	return failure.BadRelease(fmt.Sprintf("release %s changed after the deployer accepted it: its recorded sha256 is %s, release.json's is %s", releaseID, recorded, got))
}

// VerifiedRelease reads a release the deployer accepted and checks it:
// the canonical hash of release.json (release.Hash) must
// be the one Validate recorded (RecordReleaseHash). It returns the
// release as decoded (without defaults applied) and its hash.
//
// Errors: a release whose content differs from the record, or with no
// record (never validated, or its records expired), is a
// *failure.BadReleaseError naming the release and the hashes; the errors
// of GetRelease otherwise.
func (l *Ledger) VerifiedRelease(ctx context.Context, project, config, releaseID string) (*release.Release, string, error) {
	rec, found, err := l.releaseHash(ctx, project, config, releaseID)
	if err != nil {
		return nil, "", err
	}
	if !found {
		return nil, "", failure.BadRelease(fmt.Sprintf("release %s has no hash recorded by the deployer (%s): it never passed Validate, or its records expired; its content cannot be trusted",
			releaseID, naming.ReleaseHashKey(project, config, releaseID)))
	}
	r, err := l.GetRelease(ctx, project, config, releaseID)
	if err != nil {
		return nil, "", err
	}
	sum, err := release.Hash(r)
	if err != nil {
		return nil, "", failure.BadRelease(fmt.Sprintf("release %s: %v", releaseID, err))
	}
	if sum != rec.ReleaseSHA256 {
		return nil, "", changedRelease(releaseID, rec.ReleaseSHA256, sum)
	}
	return r, sum, nil
}

// CheckReleaseHash checks sum, the canonical hash of release.json as a
// reader found it, against the hash Validate recorded: nil when they
// agree or when there is no record (a release that never passed Validate
// ran nothing: a reader may show it, never act on it); a
// *failure.BadReleaseError naming both hashes when they differ.
func (l *Ledger) CheckReleaseHash(ctx context.Context, project, config, releaseID, sum string) error {
	rec, found, err := l.releaseHash(ctx, project, config, releaseID)
	switch {
	case err != nil:
		return err
	case found && rec.ReleaseSHA256 != sum:
		return changedRelease(releaseID, rec.ReleaseSHA256, sum)
	}
	return nil
}

// releaseHash reads the record of a release's hash; found is false when
// there is none.
func (l *Ledger) releaseHash(ctx context.Context, project, config, releaseID string) (ReleaseHash, bool, error) {
	var rec ReleaseHash
	found, err := l.getJSON(ctx, naming.ReleaseHashKey(project, config, releaseID), &rec)
	return rec, found, err
}
