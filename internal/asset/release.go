package asset

import (
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/ferryhq/ferry/internal/release"
)

// PrepareRelease makes the release r, read from the release file at file,
// ready to upload, as ferry deploy does: it sets its id, created_at
// (now, to the millisecond, UTC) and created_by, hashes every asset (read
// from its file next to the release file) into its sha256 and size,
// applies the defaults and checks the release as the deployer will
// (Validate(true)). It returns the canonical encoding: the bytes to upload
// and start the execution with. r is modified. An asset that cannot be read
// is an error naming it; an invalid release is the *failure.BadReleaseError
// of Validate.
func PrepareRelease(r *release.Release, file string, now time.Time, by, id string) ([]byte, error) {
	r.ReleaseID = id
	r.CreatedAt = now.UTC().Truncate(time.Millisecond)
	r.CreatedBy = by
	names := make([]string, 0, len(r.Assets))
	for name := range r.Assets {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		a := r.Assets[name]
		f, err := os.Open(release.AssetPath(file, a))
		if err != nil {
			return nil, fmt.Errorf("asset %s: %w", name, err)
		}
		sum, size, err := Hash(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("asset %s: %w", name, err)
		}
		a.SHA256, a.Size = sum, size
	}
	r.ApplyDefaults()
	if err := r.Validate(true); err != nil {
		return nil, err
	}
	return release.Canonical(r)
}
