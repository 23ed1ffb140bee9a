package submit

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/asset"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// S3 is the S3 API submitting calls on the deployer bucket (*s3.Client);
// DeleteObject only because it reaches the bucket through the ledger,
// which it never asks to delete.
type S3 interface {
	HeadObject(ctx context.Context, in *s3.HeadObjectInput, optFns ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
	PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, optFns ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
	DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
}

// StepFunctions is the Step Functions API submitting calls (*sfn.Client).
type StepFunctions interface {
	StartExecution(ctx context.Context, in *sfn.StartExecutionInput, optFns ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error)
	DescribeExecution(ctx context.Context, in *sfn.DescribeExecutionInput, optFns ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error)
}

var (
	_ S3            = (*s3.Client)(nil)
	_ StepFunctions = (*sfn.Client)(nil)
)

// Prover makes a release's identity proof (identity.Signer).
type Prover interface {
	Prove(ctx context.Context, contentHash string) (*release.Identity, error)
}

var _ Prover = identity.Signer{}

// Deployer is a deployer releases are submitted to: its bucket and state
// machine, and the clients that reach them.
type Deployer struct {
	Bucket          string
	StateMachineARN string
	S3              S3
	SFN             StepFunctions
}

// Prepared is a release ready to upload.
type Prepared struct {
	// File is the release file it was read from; assets are next to it.
	File    string
	Release *release.Release
	// Raw is its canonical encoding: what is uploaded and started.
	Raw []byte
}

// ExecutionName is the name its execution starts under.
func (p *Prepared) ExecutionName() string {
	return naming.ExecutionName(p.Release.ProjectName, p.Release.ConfigName, p.Release.ReleaseID)
}

// NewReleaseID is a release id: the UTC time to the second and 6 hex
// digits read from random (nil: crypto/rand), e.g.
// 20250102T150405Z-3f9a1c.
func NewReleaseID(now time.Time, random io.Reader) string {
	if random == nil {
		random = rand.Reader
	}
	var b [3]byte
	_, _ = io.ReadFull(random, b[:]) // crypto/rand never fails; a short test reader leaves zeros
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// Prepare readies r, read from the release file at file, to be uploaded:
// it sets its id, created_at (now, to the millisecond, UTC) and
// created_by, hashes every asset (read from its file next to the release
// file) into its sha256 and size, applies the defaults, checks the release
// as the deployer will (Validate(true)) and adds its identity proof,
// made by prover. r is modified. An asset that cannot be read is
// an error naming it; an invalid release is the *failure.BadReleaseError
// of Validate.
func Prepare(ctx context.Context, prover Prover, r *release.Release, file string, now time.Time, by, id string) (*Prepared, error) {
	if err := HashAssets(r, file); err != nil {
		return nil, err
	}
	return seal(ctx, prover, r, file, now, by, id)
}

// HashAssets sets the SHA-256 and size of every asset of r, the release
// read from the release file file, from the asset's file (relative to
// the release file). r is modified. An asset that cannot be read is an
// error naming it.
func HashAssets(r *release.Release, file string) error {
	for _, name := range assetNames(r) {
		a := r.Assets[name]
		f, err := os.Open(release.AssetPath(file, a))
		if err != nil {
			return fmt.Errorf("asset %s: %w", name, err)
		}
		sum, size, err := asset.Hash(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("asset %s: %w", name, err)
		}
		a.SHA256, a.Size = sum, size
	}
	return nil
}

// PrepareAgain readies a new release deploying again the content of
// stored, a release the deployer keeps (ferry rollback): a copy with its
// own id, created_at and created_by, rollback_of naming stored, remove
// set to remove, the detach of each service of detach set to it, and a
// new identity proof. Its assets are those stored names by hash: Upload
// checks they are still in the deployer bucket. stored is not modified.
func PrepareAgain(ctx context.Context, prover Prover, stored *release.Release, remove []string, detach map[string]release.Detach, now time.Time, by, id string) (*Prepared, error) {
	r := stored.Clone()
	r.Identity, r.RollbackOf, r.Remove = nil, stored.ReleaseID, slices.Clone(remove)
	for svc, d := range detach {
		if s := r.Services[svc]; s != nil {
			s.Detach = &release.Detach{ELBs: slices.Clone(d.ELBs), TargetGroups: slices.Clone(d.TargetGroups)}
		}
	}
	r.HealOf, r.PromotionOf = "", "" // a rollback is its caller's release, proved by them
	return seal(ctx, prover, r, "", now, by, id)
}

// PrepareDestroy readies a destroy of the project-config of of (ferry
// destroy): a release deploying nothing, in of's target environment
// (account, region, qualifier), with its own id, created_at, created_by
// and identity proof. of is a release of the config, the one deployed
// now when there is one: the destroy retires the groups in its target.
func PrepareDestroy(ctx context.Context, prover Prover, of *release.Release, now time.Time, by, id string) (*Prepared, error) {
	r := &release.Release{
		ProjectName: of.ProjectName, ConfigName: of.ConfigName,
		AccountID: of.AccountID, Region: of.Region, Qualifier: of.Qualifier,
		Description: "destroy " + of.ProjectName + " " + of.ConfigName,
		Destroy:     true,
	}
	return seal(ctx, prover, r, "", now, by, id)
}

// seal gives r its id, created_at and created_by, checks it as the
// deployer will and adds its identity proof.
func seal(ctx context.Context, prover Prover, r *release.Release, file string, now time.Time, by, id string) (*Prepared, error) {
	r.ReleaseID = id
	r.CreatedAt = now.UTC().Truncate(time.Millisecond)
	r.CreatedBy = by
	r.ApplyDefaults()
	if err := r.Validate(true); err != nil {
		return nil, err
	}
	sum, err := release.IdentityHash(r)
	if err != nil {
		return nil, err
	}
	if r.Identity, err = prover.Prove(ctx, sum); err != nil {
		return nil, fmt.Errorf("proving who asks (sts:GetCallerIdentity with the submitter's credentials): %w", err)
	}
	raw, err := release.Canonical(r)
	if err != nil {
		return nil, err
	}
	return &Prepared{File: file, Release: r, Raw: raw}, nil
}

// assetNames are the names of r's assets, sorted.
func assetNames(r *release.Release) []string {
	names := make([]string, 0, len(r.Assets))
	for name := range r.Assets {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Upload puts p's assets in the deployer bucket (only those absent; an
// asset whose file changed since Prepare hashed it is an error) and then
// p itself (ledger.PutRelease: once; the same bytes again are fine). A
// release prepared again (no File) uploads no asset: each must still be
// in the bucket, or it is ErrAssetGone naming it and nothing is written.
func (d Deployer) Upload(ctx context.Context, p *Prepared) error {
	r := p.Release
	for _, name := range assetNames(r) {
		a := r.Assets[name]
		if p.File == "" {
			if err := d.present(ctx, r, name, a); err != nil {
				return err
			}
			continue
		}
		got, _, _, err := asset.Upload(ctx, d.S3, d.Bucket, r.ProjectName, r.ConfigName, release.AssetPath(p.File, a))
		if err != nil {
			return fmt.Errorf("uploading asset %s: %w", name, err)
		}
		if got != a.SHA256 {
			return fmt.Errorf("asset %s (%s) changed while it was read; submit the release again", name, a.Path)
		}
	}
	if err := ledger.New(d.S3, d.Bucket).PutRelease(ctx, r.ProjectName, r.ConfigName, r.ReleaseID, p.Raw); err != nil {
		return fmt.Errorf("uploading the release: %w", err)
	}
	return nil
}

// ErrAssetGone is in the chain of the error Upload returns when an asset
// of a release prepared again is no longer in the deployer bucket.
var ErrAssetGone = errors.New("no longer in the deployer bucket")

// present checks asset name of r is in the deployer bucket with its size.
func (d Deployer) present(ctx context.Context, r *release.Release, name string, a *release.Asset) error {
	key := naming.AssetKey(r.ProjectName, r.ConfigName, a.SHA256)
	out, err := d.S3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(d.Bucket), Key: aws.String(key)})
	switch {
	case cloud.IsNotFound(err):
		return fmt.Errorf("asset %s (sha256 %s): %w; deploy its release file instead", name, a.SHA256, ErrAssetGone)
	case err != nil:
		return fmt.Errorf("checking asset %s: %w", name, err)
	case aws.ToInt64(out.ContentLength) != a.Size:
		return fmt.Errorf("asset %s (sha256 %s) in the deployer bucket is %d bytes, not %d; deploy its release file instead", name, a.SHA256, aws.ToInt64(out.ContentLength), a.Size)
	}
	return nil
}

// ErrNameTaken is in the chain of the error Start returns when the
// release's execution name is taken by an execution of another input.
var ErrNameTaken = errors.New("the execution name is taken by another release")

// Start starts p's execution under p.ExecutionName and returns its ARN
// (StartNamed).
func (d Deployer) Start(ctx context.Context, p *Prepared) (string, error) {
	return d.StartNamed(ctx, p.ExecutionName(), p.Raw)
}

// StartNamed starts the execution name with input raw and returns its
// ARN. A retried start of the same name and input returns the same
// execution (Step Functions' idempotency for a running execution); a name
// already used is that execution only when its input is raw: an execution
// of another input under the name is ErrNameTaken, never taken for this
// release's.
func (d Deployer) StartNamed(ctx context.Context, name string, raw []byte) (string, error) {
	out, err := d.SFN.StartExecution(ctx, &sfn.StartExecutionInput{
		StateMachineArn: aws.String(d.StateMachineARN),
		Name:            aws.String(name),
		Input:           aws.String(string(raw)),
	})
	if err == nil {
		return aws.ToString(out.ExecutionArn), nil
	}
	var exists *sfntypes.ExecutionAlreadyExists
	if !errors.As(err, &exists) {
		return "", err
	}
	arn := asl.ExecutionARN(d.StateMachineARN, name)
	desc, err := d.SFN.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		return "", fmt.Errorf("execution %s already exists, and reading it failed: %w", name, err)
	}
	if !sameJSON(aws.ToString(desc.Input), raw) {
		return "", fmt.Errorf("execution %s (started %s): %w; nothing was started",
			name, aws.ToTime(desc.StartDate).UTC().Format(time.RFC3339), ErrNameTaken)
	}
	return arn, nil
}

// sameJSON reports whether text and raw hold the same JSON value. Step
// Functions (and the local region) report an execution's input as it was
// given, so the bytes match; comparing values also accepts an input that
// comes back re-encoded.
func sameJSON(text string, raw []byte) bool {
	var a, b any
	return json.Unmarshal([]byte(text), &a) == nil && json.Unmarshal(raw, &b) == nil && reflect.DeepEqual(a, b)
}

// Promotion is a promotion request ready to upload: what `ferry pipeline
// start` stores and starts.
type Promotion struct {
	// File is the release file; its assets are next to it.
	File    string
	Request *pipeline.Request
	// Raw is the request's canonical encoding.
	Raw []byte
}

// PreparePromotion makes the request to promote base (read from file,
// its assets hashed) through p: its id, created_at and created_by, checked
// as the deployer will (pipeline.DecodeRequest), with an identity proof
// bound to the whole request.
func PreparePromotion(ctx context.Context, prover Prover, p *pipeline.Pipeline, base *release.Release, file string, now time.Time, by, id string) (*Promotion, error) {
	if err := HashAssets(base, file); err != nil {
		return nil, err
	}
	q := &pipeline.Request{PromotionID: id, CreatedAt: now.UTC().Truncate(time.Millisecond), CreatedBy: by, Pipeline: p, Release: base}
	raw, err := q.Canonical()
	if err != nil {
		return nil, err
	}
	if q, err = pipeline.DecodeRequest(raw); err != nil {
		return nil, err
	}
	sum, err := q.IdentityHash()
	if err != nil {
		return nil, err
	}
	if q.Identity, err = prover.Prove(ctx, sum); err != nil {
		return nil, fmt.Errorf("proving who asks (sts:GetCallerIdentity with the submitter's credentials): %w", err)
	}
	if raw, err = q.Canonical(); err != nil {
		return nil, err
	}
	return &Promotion{File: file, Request: q, Raw: raw}, nil
}

// UploadPromotion puts the release's assets under the first stage's
// config (only those absent), then the request at its
// naming.PromotionRequestKey, once: the same bytes again are fine.
func (d Deployer) UploadPromotion(ctx context.Context, pr *Promotion) error {
	q := pr.Request
	project, first := q.Pipeline.ProjectName, q.FirstConfig()
	for _, name := range assetNames(q.Release) {
		a := q.Release.Assets[name]
		got, _, _, err := asset.Upload(ctx, d.S3, d.Bucket, project, first, release.AssetPath(pr.File, a))
		if err != nil {
			return fmt.Errorf("uploading asset %s: %w", name, err)
		}
		if got != a.SHA256 {
			return fmt.Errorf("asset %s (%s) changed while it was read; start the promotion again", name, a.Path)
		}
	}
	key := naming.PromotionRequestKey(project, first, q.PromotionID)
	if _, err := d.S3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(d.Bucket), Key: aws.String(key), Body: bytes.NewReader(pr.Raw),
		ContentLength: aws.Int64(int64(len(pr.Raw))), IfNoneMatch: aws.String("*"),
	}); err != nil && !cloud.IsPreconditionFailed(err) {
		return fmt.Errorf("uploading the promotion request: %w", err)
	}
	return nil
}

// StartPromotion starts the promotion's execution and returns its ARN
// (StartNamed).
func (d Deployer) StartPromotion(ctx context.Context, pr *Promotion) (string, error) {
	input, err := json.Marshal(execution.PromotionInput{Promotion: pr.Raw})
	if err != nil {
		return "", err
	}
	q := pr.Request
	return d.StartNamed(ctx, naming.PromotionExecutionName(q.Pipeline.ProjectName, q.FirstConfig(), q.PromotionID), input)
}
