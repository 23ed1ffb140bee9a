package reliability

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/client/submit"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// hostileDir holds the hostile corpus: each NAME.json with, in
// NAME.json.expect, a substring the refusal must contain.
var hostileDir = filepath.Join("..", "..", "..", "testdata", "hostile")

// mutatingPrefixes are the operation prefixes of calls that change AWS.
var mutatingPrefixes = []string{"Create", "Delete", "Put", "Update", "Attach", "Detach", "Register", "Deregister",
	"Set", "Terminate", "Suspend", "Resume", "Complete", "Enable", "Disable", "Modify", "Run"}

// TestHostileCorpus runs each hostile release through the client's deploy
// path: read and prepared as ferry deploy does (release.ReadFile,
// submit.Prepare), and, when that accepts it, uploaded and deployed on
// the region over the reference's previous release. Each is refused with a
// message naming what and where; a release refused before upload writes
// nothing; one refused by the deployer ends in FailureClean with no
// mutating AWS call (but the deploy events it puts on the bus, which
// change no resource: Release Refused, Release Failed), no S3 object
// beyond its own release, run-once marker and outcome, and the previous
// release still serving.
func TestHostileCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(hostileDir, "*.json"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 50, "the hostile corpus has at least 50 releases")
	sc := reference(t)
	deployed := 0
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(file + ".expect")
			require.NoError(t, err, "every hostile release has a .expect sidecar")
			want := strings.TrimRight(string(b), "\n")
			require.NotEmpty(t, want)

			r, err := release.ReadFile(file)
			if err == nil {
				_, err = submit.Prepare(context.Background(), offlinePresigner(), r, file, sc.Start, sc.By, "20250101T000000Z-0000aa")
			}
			if err != nil {
				assert.Contains(t, err.Error(), want)
				var bad *failure.BadReleaseError
				if errors.As(err, &bad) {
					assert.NotEmpty(t, bad.Problems, "a refusal names its problems")
				}
				return // refused before anything is uploaded
			}
			deployed++
			res, err := sc.Run(context.Background(), RunOptions{Next: file})
			require.NoError(t, err)
			assert.Equal(t, execution.EndFailureClean, res.End, "%s: %s", res.Error, res.Cause)
			assert.Equal(t, "BadReleaseError", res.Error)
			assert.Contains(t, res.Cause, want)
			assert.Empty(t, res.Violations)
			for _, c := range res.Calls {
				if c.Service == "EventBridge" && c.Op == "PutEvents" {
					continue // a deploy event: ferry help events
				}
				for _, p := range mutatingPrefixes {
					assert.False(t, !c.S3 && strings.HasPrefix(c.Op, p), "refused release made the mutating call %s", c)
				}
			}
			p, cfg := "acme/shop", "production"
			allowed := map[string]bool{
				naming.ReleaseKey(p, cfg, res.ReleaseID):     true,
				naming.StartedKey(p, cfg, res.ReleaseID):     true,
				naming.ReleaseHashKey(p, cfg, res.ReleaseID): true,
				naming.OutcomeKey(p, cfg, res.ReleaseID):     true,
			}
			for key, body := range res.Objects {
				if before, ok := res.ObjectsBefore[key]; ok && (before == body || allowed[key]) {
					continue
				}
				assert.True(t, allowed[key], "refused release wrote %s", key)
			}
			for key := range res.ObjectsBefore {
				_, ok := res.Objects[key]
				assert.True(t, ok, "refused release removed %s", key)
			}
		})
	}
	t.Logf("%d hostile releases, %d refused by the deployer", len(files), deployed)
}

// offlinePresigner signs identity proofs without calling anything: a
// refusal must come before any proof matters.
func offlinePresigner() identity.Signer {
	return identity.Signer{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDHOSTILE", "hostile", "")}
}
