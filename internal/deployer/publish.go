package deployer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/target"
	"github.com/ferryhq/ferry/internal/tuning"
)

// publish is the Publish task. A release with assets first records its
// target among its config's (recordTarget). For each asset of the
// release it copies the content the client uploaded to the deployer bucket
// (naming.AssetKey) into the target's asset bucket
// (naming.AssetBucketName, naming.TargetAssetKey) as the target's publish
// role, unless an object is already there with the same size and SHA-256
// metadata. What it reads is hashed and must be the asset's SHA-256 (else a
// *failure.DeployError; nothing is deleted, keys are content-addressed);
// the write carries the SHA-256 so S3 checks what it stores. Meanwhile
// (side by side: the URLs are known before anything is published) it
// renders each service's user data with the assets' URLs and stores it
// with the release (ledger.PutUserData). A failure of an asset is
// returned before one of the user data. The config's environments, the
// release and its run-once marker (the session it publishes as) are read
// side by side first (loadBeside). Idempotent: a retry skips what is
// published and rewrites the same user data.
func (d *Deployer) publish(ctx context.Context, req execution.Request) (any, error) {
	st, err := d.verify(ctx, req)
	if err != nil {
		return nil, err
	}
	var known []target.Target
	l, err := d.loadBeside(ctx, st, func(ctx context.Context) error {
		var err error
		known, err = d.knownTargets(ctx, st.ProjectName, st.ConfigName)
		return err
	})
	if err != nil {
		return nil, err
	}
	// The user data names the assets' URLs, which need nothing
	// published: both go side by side, an asset's failure first.
	err = fanout.Each(ctx, 2, 2, func(ctx context.Context, i int) error {
		if i == 0 {
			return d.publishAssets(ctx, st, l, known)
		}
		return d.putUserData(ctx, l.r, st.Target)
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// publishAssets records the target among its config's (known, as read)
// and publishes each asset of the release l there (publishAsset), as
// the session its run-once marker names, for a release with assets.
func (d *Deployer) publishAssets(ctx context.Context, st *execution.State, l *loaded, known []target.Target) error {
	r := l.r
	if len(r.Assets) == 0 {
		return nil
	}
	if err := d.recordTarget(ctx, st, known); err != nil {
		return err
	}
	clients, err := d.connectAs(ctx, st, l.session(st), false)
	if err != nil {
		return err
	}
	bucket := naming.AssetBucketName(st.Target.AccountID, st.Target.Region, st.Target.Qualifier)
	for _, n := range slices.Sorted(maps.Keys(r.Assets)) {
		if a := r.Assets[n]; a != nil {
			if err := d.publishAsset(ctx, clients.Assets, st, bucket, n, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// putUserData renders every service's user data of r for t, then stores
// them (ledger.PutUserData) tuning.StoreParallel at a time: a release of
// many services is not kept from launching by its writes one after the
// other. Rendering reads nothing and fails before anything is written.
func (d *Deployer) putUserData(ctx context.Context, r *release.Release, t target.Target) error {
	services := r.ServiceNames()
	data := make([][]byte, len(services))
	for i, svc := range services {
		var err error
		if data[i], err = userData(r, t, svc); err != nil {
			return err
		}
	}
	return fanout.Each(ctx, tuning.StoreParallel, len(services), func(ctx context.Context, i int) error {
		return d.ledger.PutUserData(ctx, r.ProjectName, r.ConfigName, r.ReleaseID, services[i], data[i])
	})
}

// userData renders the user data of service svc of the verified release r
// for target t, with the URLs Publish publishes r's assets under. It reads
// nothing: Deploy launches what the release says, never what is stored,
// and the copy Publish stores is a record of it. Errors are
// release.RenderUserData's.
func userData(r *release.Release, t target.Target, svc string) ([]byte, error) {
	bucket := naming.AssetBucketName(t.AccountID, t.Region, t.Qualifier)
	refs := map[string]release.AssetRef{}
	for n, a := range r.Assets {
		if a != nil {
			refs[n] = release.AssetRef{URL: naming.S3URL(bucket, naming.TargetAssetKey(r.ProjectName, r.ConfigName, a.SHA256)), SHA256: a.SHA256}
		}
	}
	data, err := release.RenderUserData(r.ServiceUserData(svc), release.Vars{
		ReleaseID: r.ReleaseID, ProjectName: r.ProjectName, ConfigName: r.ConfigName, ServiceName: svc,
		Assets: refs,
	})
	if err != nil {
		return nil, err
	}
	return []byte(data), nil
}

// publishAsset publishes one asset (see publish).
func (d *Deployer) publishAsset(ctx context.Context, dst cloud.AssetStore, st *execution.State, bucket, name string, a *release.Asset) error {
	key := naming.TargetAssetKey(st.ProjectName, st.ConfigName, a.SHA256)
	done, err := published(ctx, dst, bucket, key, a)
	switch {
	case done:
		d.log.Debug("asset already published", "asset", name, "sha256", a.SHA256)
		return nil
	case err != nil && !cloud.IsNotFound(err):
		return deployErr("s3:HeadObject "+bucket+"/"+key, err)
	}

	src := naming.AssetKey(st.ProjectName, st.ConfigName, a.SHA256)
	obj, err := d.store.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(d.cfg.Bucket), Key: aws.String(src)})
	if cloud.IsNotFound(err) {
		return failure.BadRelease(fmt.Sprintf("assets.%s: not uploaded to the deployer bucket (%s)", name, src))
	}
	if err != nil {
		return deployErr("s3:GetObject "+src, err)
	}
	defer obj.Body.Close()
	// The asset is held in memory (at most limits.MaxAssetBytes) so the
	// write has a seekable body whose checksum S3 verifies.
	h := sha256.New()
	var buf bytes.Buffer
	buf.Grow(int(min(a.Size, limits.MaxAssetBytes)) + bytes.MinRead) // one allocation, not doublings
	n, err := io.Copy(io.MultiWriter(&buf, h), io.LimitReader(obj.Body, limits.MaxAssetBytes+1))
	if err != nil {
		return &failure.RetryableError{Op: "read asset " + src, Err: err}
	}
	if n > limits.MaxAssetBytes {
		return failure.BadRelease(fmt.Sprintf("assets.%s: larger than %d bytes", name, limits.MaxAssetBytes))
	}
	sum := h.Sum(nil)
	if got := hex.EncodeToString(sum); got != a.SHA256 || n != a.Size {
		return &failure.DeployError{Op: "publish asset " + name, Err: fmt.Errorf(
			"the deployer bucket's %s holds %d bytes with SHA-256 %s, not the release's %d bytes with SHA-256 %s",
			src, n, got, a.Size, a.SHA256)}
	}
	_, err = dst.PutObject(ctx, &s3.PutObjectInput{
		Bucket:         aws.String(bucket),
		Key:            aws.String(key),
		Body:           bytes.NewReader(buf.Bytes()),
		ContentLength:  aws.Int64(n),
		ContentType:    aws.String("application/octet-stream"),
		ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(sum)),
		// Create-only: the asset bucket's policy refuses any other write,
		// so a published asset never changes.
		IfNoneMatch: aws.String("*"),
	})
	if cloud.IsPreconditionFailed(err) {
		// Another publish of the same key won the race (or a different
		// object is there, which only a person may remove): what is
		// there is checked as above.
		if done, _ := published(ctx, dst, bucket, key, a); done {
			return nil
		}
		return &failure.DeployError{Op: "publish asset " + name, Err: fmt.Errorf(
			"%s/%s exists and is not the asset's %d bytes with SHA-256 %s: published assets are never overwritten", bucket, key, a.Size, a.SHA256)}
	}
	if err != nil {
		return deployErr("s3:PutObject "+bucket+"/"+key, err)
	}
	d.log.Info("asset published", "asset", name, "sha256", a.SHA256, "bytes", n, "bucket", bucket)
	return nil
}

// published reports whether bucket/key holds asset a, by S3's own record
// of the object: its size, and the SHA-256 checksum S3 computed and
// verified when the object was written (HeadObject with ChecksumMode
// ENABLED returns it, "Checking object integrity", Amazon S3 User Guide),
// never by metadata, which whoever writes an object sets as they please.
// An object written without a SHA-256 checksum is not a published asset. A missing object is false with the HeadObject's not-found error.
func published(ctx context.Context, dst cloud.AssetStore, bucket, key string, a *release.Asset) (bool, error) {
	head, err := dst.HeadObject(ctx, &s3.HeadObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), ChecksumMode: s3types.ChecksumModeEnabled,
	})
	if err != nil {
		return false, err
	}
	sum, err := hex.DecodeString(a.SHA256)
	if err != nil {
		return false, nil
	}
	return aws.ToInt64(head.ContentLength) == a.Size &&
		aws.ToString(head.ChecksumSHA256) == base64.StdEncoding.EncodeToString(sum), nil
}

// deployErr classifies an AWS error of op: transient ones are retryable,
// the rest a *failure.DeployError.
func deployErr(op string, err error) error {
	return cloud.ClassifyAs(op, err, failure.AsDeploy)
}
