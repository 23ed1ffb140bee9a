package deployer

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/lock"
	"github.com/ferryhq/ferry/internal/tuning"
)

// publishedThere says whether the target's asset bucket holds the asset
// of r named name, as Publish published it.
func (h *harness) publishedThere(r *release.Release, name string) bool {
	h.t.Helper()
	return h.objectThere(assetBucket, naming.TargetAssetKey(r.ProjectName, r.ConfigName, r.Assets[name].SHA256))
}

func (h *harness) objectThere(bucket, key string) bool {
	h.t.Helper()
	_, err := h.s3.HeadObject(h.t.Context(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	return err == nil
}

func (h *harness) putObject(bucket, key string) {
	h.t.Helper()
	_, err := h.s3.PutObject(h.t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader("x")})
	require.NoError(h.t, err)
}

// publishedFailing runs r up to Publish and fails it there: its assets
// are published, and it never becomes current.
func (h *harness) publishedFailing(r *release.Release) {
	h.t.Helper()
	x := h.start(r)
	require.NoError(h.t, x.steps(upToDeploy[:4]...))
	require.NoError(h.t, x.fail(&failure.DeployError{Op: "test", Err: assert.AnError}))
}

// TestCleanUpSuccessCollectsPublishedAssets: a release's success deletes
// the assets of its project-config in the target's asset bucket that none
// of the newest KeepReleases releases, nor the release deployed now,
// names, once older than the grace; and nothing else: not a young asset of
// a release that failed, not another project-config's, not a key under the
// prefix that is no asset's, not an asset of the layout before
// project-config prefixes (assets/<sha256>), which another deployer's
// fleets may use.
func TestCleanUpSuccessCollectsPublishedAssets(t *testing.T) {
	h := newHarness(t)
	h.d.cfg.KeepReleases = 1
	r1 := h.baseRelease()
	h.addAsset(r1, "app", []byte("v1"))
	h.start(r1).succeed()
	require.True(t, h.publishedThere(r1, "app"))
	sum := r1.Assets["app"].SHA256
	others := []string{
		"assets/" + sum,
		naming.TargetAssetKey(project, "other", sum),
		naming.TargetAssetKey(project, config, "notes.txt"),
	}
	for _, key := range others {
		h.putObject(assetBucket, key)
	}

	h.clk.Advance(tuning.AssetGrace + time.Hour)
	failed := h.baseRelease()
	h.addAsset(failed, "app", []byte("v3, failed"))
	h.publishedFailing(failed)
	require.True(t, h.publishedThere(failed, "app"))
	r2 := h.baseRelease()
	h.addAsset(r2, "app", []byte("v2"))
	h.start(r2).succeed()
	assert.False(t, h.publishedThere(r1, "app"), "old, and no longer named by the newest release or the one deployed")
	assert.True(t, h.publishedThere(r2, "app"), "deployed now")
	assert.True(t, h.publishedThere(failed, "app"), "younger than the grace")
	for _, key := range others {
		assert.True(t, h.objectThere(assetBucket, key), key)
	}

	h.clk.Advance(tuning.AssetGrace + time.Hour)
	r4 := h.baseRelease()
	h.addAsset(r4, "app", []byte("v2")) // r2's content again
	h.start(r4).succeed()
	assert.False(t, h.publishedThere(failed, "app"), "now old, and named by no kept release")
	assert.True(t, h.publishedThere(r4, "app"))
}

// TestCollectPublishedIsBestEffort: a collection that cannot list,
// delete, or read what is deployed deletes nothing more, and the release
// succeeds all the same; one whose release no longer holds the lock (an
// operator unlocked it: a deploy of the project-config may be publishing)
// deletes nothing.
func TestCollectPublishedIsBestEffort(t *testing.T) {
	for _, tt := range []struct {
		name      string
		deny      func(h *harness)
		collected bool
	}{
		{"nothing refused", func(*harness) {}, true},
		{"listing refused", func(h *harness) {
			h.published.Deny = func(op, _ string) bool { return op == "ListObjectsV2" }
		}, false},
		{"delete refused (a target bootstrapped before assets were collected)", func(h *harness) {
			h.published.Deny = func(op, _ string) bool { return op == "DeleteObject" }
		}, false},
		{"the current record unreadable", func(h *harness) {
			current := naming.CurrentKey(project, config)
			h.store.Deny = func(op, key string) bool { return op == "GetObject" && key == current }
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.d.cfg.KeepReleases = 1
			old := h.baseRelease()
			h.addAsset(old, "app", []byte("old, failed"))
			h.publishedFailing(old)
			h.clk.Advance(tuning.AssetGrace + time.Hour)
			r := h.baseRelease()
			h.addAsset(r, "app", []byte("v2"))
			x := h.start(r)
			for _, task := range upToDeploy {
				require.NoError(t, x.stepRetrying(task), task)
			}
			_, err := x.untilHealthy(200)
			require.NoError(t, err)
			tt.deny(h) // at the swap, where the collection is
			require.NoError(t, x.stepRetrying(execution.TaskCleanUpSuccess))
			assert.True(t, x.state.Retire.Done)
			h.store.Deny, h.published.Deny = nil, nil
			o, found, err := h.ledger.GetOutcome(t.Context(), project, config, r.ReleaseID)
			require.NoError(t, err)
			require.True(t, found)
			assert.Equal(t, execution.EndSuccess, o.End)
			assert.Equal(t, !tt.collected, h.publishedThere(old, "app"))
			assert.True(t, h.publishedThere(r, "app"))
		})
	}

	t.Run("lock not held", func(t *testing.T) {
		h := newHarness(t)
		h.d.cfg.KeepReleases = 1
		r1 := h.baseRelease()
		h.addAsset(r1, "app", []byte("v1"))
		h.start(r1).succeed()
		h.clk.Advance(tuning.AssetGrace + time.Hour)
		r2 := h.baseRelease()
		h.addAsset(r2, "app", []byte("v2"))
		x := h.start(r2)
		x.succeed()
		other := h.baseRelease()
		h.upload(other)
		require.NoError(t, h.locks.Acquire(t.Context(), project, config, lock.Holder{ReleaseID: other.ReleaseID, Execution: "arn:other"}))
		h.putObject(assetBucket, naming.TargetAssetKey(project, config, strings.Repeat("c", 64)))
		h.clk.Advance(tuning.AssetGrace + time.Hour)
		c, err := h.d.connect(t.Context(), x.state, false)
		require.NoError(t, err)
		h.d.collectPublished(t.Context(), c, x.state)
		assert.True(t, h.objectThere(assetBucket, naming.TargetAssetKey(project, config, strings.Repeat("c", 64))), "another release holds the lock")
	})
}
