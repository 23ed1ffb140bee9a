package asset_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/local/s3server/s3test"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/asset"
)

const (
	bucket  = "ferry-deployer-123456789012-us-east-1"
	project = "coinbase-deploy-test"
	config  = "development"
)

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestHash(t *testing.T) {
	tests := []struct {
		name     string
		r        io.Reader
		wantSum  string
		wantSize int64
		wantErr  string
	}{
		{name: "empty", r: strings.NewReader(""), wantSum: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{name: "abc", r: strings.NewReader("abc"), wantSum: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", wantSize: 3},
		{name: "read error", r: failingReader{}, wantErr: "disk on fire"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, size, err := asset.Hash(tc.r)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantSum, got)
			assert.Equal(t, tc.wantSize, size)
		})
	}
}

// countingS3 counts PutObject calls made through the real client.
type countingS3 struct {
	*s3.Client
	puts atomic.Int32
}

func (c *countingS3) PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	c.puts.Add(1)
	return c.Client.PutObject(ctx, in, optFns...)
}

func TestUpload(t *testing.T) {
	content := []byte("#!/bin/sh\necho hello\n")
	tests := []struct {
		name         string
		setup        func(t *testing.T, c *s3.Client)
		wantUploaded bool
		wantPuts     int32
		wantErr      string
	}{
		{name: "absent: uploaded", wantUploaded: true, wantPuts: 1},
		{
			name: "present: skipped",
			setup: func(t *testing.T, c *s3.Client) {
				_, err := c.PutObject(t.Context(), &s3.PutObjectInput{
					Bucket: aws.String(bucket), Key: aws.String(naming.AssetKey(project, config, sum(content))),
					Body: bytes.NewReader(content),
				})
				require.NoError(t, err)
			},
			wantUploaded: false, wantPuts: 0,
		},
		{
			name: "present with another size: refused",
			setup: func(t *testing.T, c *s3.Client) {
				_, err := c.PutObject(t.Context(), &s3.PutObjectInput{
					Bucket: aws.String(bucket), Key: aws.String(naming.AssetKey(project, config, sum(content))),
					Body: strings.NewReader("tampered"),
				})
				require.NoError(t, err)
			},
			wantErr: "exists with 8 bytes",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := s3test.StartVersioned(t, clock.NewVirtual(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)), bucket)
			client := &countingS3{Client: srv.Client()}
			if tc.setup != nil {
				tc.setup(t, client.Client)
			}
			path := filepath.Join(t.TempDir(), "install.sh")
			require.NoError(t, os.WriteFile(path, content, 0o600))

			gotSum, size, uploaded, err := asset.Upload(t.Context(), client, bucket, project, config, path)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, sum(content), gotSum)
			assert.Equal(t, int64(len(content)), size)
			assert.Equal(t, tc.wantUploaded, uploaded)
			assert.Equal(t, tc.wantPuts, client.puts.Load())

			out, err := srv.Client().GetObject(t.Context(), &s3.GetObjectInput{
				Bucket: aws.String(bucket), Key: aws.String(naming.AssetKey(project, config, gotSum)),
			})
			require.NoError(t, err)
			defer out.Body.Close()
			stored, err := io.ReadAll(out.Body)
			require.NoError(t, err)
			assert.Equal(t, content, stored)

			// Uploading again never sends bytes.
			_, _, uploaded, err = asset.Upload(t.Context(), client, bucket, project, config, path)
			require.NoError(t, err)
			assert.False(t, uploaded)
			assert.Equal(t, tc.wantPuts, client.puts.Load())
		})
	}
}

func TestUploadRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.bin")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(limits.MaxAssetBytes+1)) // sparse: no bytes written
	require.NoError(t, f.Close())

	tests := []struct {
		name    string
		path    string
		wantBad bool
		want    string
	}{
		{name: "too large", path: big, wantBad: true, want: "over the limit of"},
		{name: "missing", path: filepath.Join(dir, "missing"), want: "no such file"},
		{name: "a directory", path: dir, want: "is not a regular file"},
	}
	srv := s3test.StartVersioned(t, nil, bucket)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, uploaded, err := asset.Upload(t.Context(), srv.Client(), bucket, project, config, tc.path)
			require.Error(t, err)
			assert.False(t, uploaded)
			assert.Contains(t, err.Error(), tc.want)
			var bad *failure.BadReleaseError
			assert.Equal(t, tc.wantBad, errors.As(err, &bad))
		})
	}
}

// TestCollect: Collect deletes the assets keep does not name and that are
// older than its bound, and nothing else: not what keep names, not a young
// asset, not a key under the prefix that is not an asset's; a failed
// listing deletes nothing.
func TestCollect(t *testing.T) {
	clk := clock.NewVirtual(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	srv := s3test.StartVersioned(t, clk, bucket)
	c := srv.Client()
	put := func(key string) {
		_, err := c.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader("x")})
		require.NoError(t, err)
	}
	old, kept, young := sum([]byte("old")), sum([]byte("kept")), sum([]byte("young"))
	put(naming.AssetKey(project, config, old))
	put(naming.AssetKey(project, config, kept))
	put(naming.AssetKey(project, config, "README"))
	put(naming.AssetKey(project, "other", old))
	clk.Advance(48 * time.Hour)
	put(naming.AssetKey(project, config, young))

	keep := func(context.Context) (map[string]bool, error) { return map[string]bool{kept: true}, nil }
	deleted, err := asset.Collect(t.Context(), c, bucket, naming.AssetPrefix(project, config), clk.Now().Add(-24*time.Hour), keep)
	require.NoError(t, err)
	assert.Equal(t, []string{old}, deleted)
	for key, want := range map[string]bool{
		naming.AssetKey(project, config, old):      false,
		naming.AssetKey(project, config, kept):     true,
		naming.AssetKey(project, config, young):    true,
		naming.AssetKey(project, config, "README"): true,
		naming.AssetKey(project, "other", old):     true,
	} {
		_, err := c.HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		assert.Equal(t, want, err == nil, key)
	}

	deleted, err = asset.Collect(t.Context(), s3test.Failing(t, 503, "SlowDown"), bucket, naming.AssetPrefix(project, config), clk.Now(), keep)
	require.Error(t, err)
	assert.True(t, failure.IsRetryable(err))
	assert.Empty(t, deleted)

	// Nothing old enough: keep is never asked (no reads of releases).
	deleted, err = asset.Collect(t.Context(), c, bucket, naming.AssetPrefix(project, config), clk.Now().Add(-72*time.Hour),
		func(context.Context) (map[string]bool, error) {
			t.Error("keep called with nothing old enough to collect")
			return nil, nil
		})
	require.NoError(t, err)
	assert.Empty(t, deleted)

	// What to keep is not known: nothing is deleted.
	deleted, err = asset.Collect(t.Context(), c, bucket, naming.AssetPrefix(project, config), clk.Now(),
		func(context.Context) (map[string]bool, error) { return nil, errors.New("a release is unreadable") })
	require.EqualError(t, err, "a release is unreadable")
	assert.Empty(t, deleted)
	for _, sum := range []string{kept, young} {
		_, err := c.HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(naming.AssetKey(project, config, sum))})
		assert.NoError(t, err)
	}
}
