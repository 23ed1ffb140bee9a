package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/object"
	"github.com/ferryhq/ferry/internal/target"
)

// S3 is the S3 API the ledger calls.
type S3 interface {
	PutObject(ctx context.Context, params *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	GetObject(ctx context.Context, params *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	ListObjectsV2(ctx context.Context, params *s3.ListObjectsV2Input, optFns ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
	DeleteObject(ctx context.Context, params *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
}

var _ S3 = (*s3.Client)(nil)

// ErrNotFound is in the chain of the error GetUserData returns when the
// object does not exist.
var ErrNotFound = errors.New("not found in the deployer bucket")

// Outcome records how the execution of a release ended.
type Outcome struct {
	ReleaseID string `json:"release_id"`
	Execution string `json:"execution"`
	// End is the end state (see package execution).
	End string `json:"end"`
	// Error and Cause are the state machine error name and message that
	// ended a failed execution.
	Error string `json:"error,omitempty"`
	Cause string `json:"cause,omitempty"`
	// Leftovers names resources a failed clean up left behind.
	Leftovers []string `json:"leftovers,omitempty"`
	// RolledBack are the previous groups a rollback put back in their
	// load balancers, healthy, before the release's groups left.
	RolledBack []string  `json:"rolled_back,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	EndedAt    time.Time `json:"ended_at"`
	// CreatedBy is who asked for the release: the caller its identity
	// proof names (its full ARN, verified by the deployer), CreatedByID
	// its unique id (GetCallerIdentity's UserId), with CreatedByName the
	// name the client gave itself; without a verified caller, that name.
	CreatedBy     string `json:"created_by,omitempty"`
	CreatedByID   string `json:"created_by_id,omitempty"`
	CreatedByName string `json:"created_by_name,omitempty"`
	// DeployerVersion is the build of the deployer that recorded the
	// outcome (buildinfo.Info.String).
	DeployerVersion string `json:"deployer_version,omitempty"`
	// Analysis is the release's last canary analysis (the one that
	// rolled it back, for a release its analysis failed); nil without
	// one.
	Analysis *execution.Analysis `json:"analysis,omitempty"`
}

// Current records what is deployed now in a project-config: written when a
// release succeeds, read by `ferry status`.
type Current struct {
	ReleaseID     string `json:"release_id"`
	Execution     string `json:"execution"`
	ReleaseSHA256 string `json:"release_sha256"`
	// CreatedBy, CreatedByID and CreatedByName are as in Outcome.
	CreatedBy     string    `json:"created_by,omitempty"`
	CreatedByID   string    `json:"created_by_id,omitempty"`
	CreatedByName string    `json:"created_by_name,omitempty"`
	DeployedAt    time.Time `json:"deployed_at"`
	// UserDataSHA256 is the hex SHA-256 of each service's rendered user
	// data, by service name.
	UserDataSHA256 map[string]string `json:"user_data_sha256,omitempty"`
	Services       []string          `json:"services"`
	// AccountID, Region and Qualifier are the environment the release
	// runs in.
	AccountID string `json:"account_id,omitempty"`
	Region    string `json:"region,omitempty"`
	Qualifier string `json:"qualifier,omitempty"`
	// Groups are the release's groups, one per service, in service order.
	Groups []CurrentGroup `json:"groups,omitempty"`
	// ReleaseVersion and Description are the release's version and
	// description, as it gave them.
	ReleaseVersion string `json:"release_version,omitempty"`
	Description    string `json:"description,omitempty"`
	// DeployerVersion is the build of the deployer that deployed the
	// release (buildinfo.Info.String).
	DeployerVersion string `json:"deployer_version,omitempty"`
}

// CurrentGroup is one service of the current release: its Auto Scaling
// group, the AMI id its instances run, its desired capacity once the
// deploy settled it, and how long its first instance took to be seen
// healthy (execution.ServiceHealth.ReadySeconds; 0 unknown).
type CurrentGroup struct {
	Service      string `json:"service"`
	Group        string `json:"group"`
	ImageID      string `json:"image_id,omitempty"`
	Desired      int    `json:"desired"`
	ReadySeconds int    `json:"ready_seconds,omitempty"`
}

// Intent is a write-ahead record of a task about to change what runs: the
// Auto Scaling groups (and the launch templates and alarms named after
// them) it acts on, written before it acts, so a retry, or the clean-up
// after a failure, knows exactly what may exist or what was being
// retired, whatever AWS shows at that moment.
type Intent struct {
	ReleaseID string    `json:"release_id"`
	Execution string    `json:"execution"`
	Since     time.Time `json:"since"`
	Groups    []string  `json:"groups"`
	// Removed are the Groups a clean-up has removed since (so a retry
	// knows them gone, not merely invisible).
	Removed []string `json:"removed,omitempty"`
	// RetiringSince is, in a deploying record, when CleanUpFailure began
	// retiring the release's groups: its time bound runs from it.
	RetiringSince *time.Time `json:"retiring_since,omitempty"`
	// RollbackSince is, in a deploying record, when CleanUpFailure before
	// a bake began waiting for the previous release to serve at its
	// healthy target: its time bound runs from it.
	RollbackSince *time.Time `json:"rollback_since,omitempty"`
	// Attached are, in a deleting record, the Groups as they served
	// before the swap detached anything (each with its load balancers,
	// target groups, desired capacity and the processes a bake suspended),
	// so the swap can put them back as they were when the new groups fall
	// below their target before the old ones are scaled in.
	Attached []StandbyGroup `json:"attached,omitempty"`
	// Elsewhere are, in a deleting record, the groups and launch
	// templates of the config the swap retires in other environments
	// than the release's (Groups are those in the release's), with how
	// they served: a move's old environment, or what a failed one left.
	Elsewhere []ElsewhereGroups `json:"elsewhere,omitempty"`
}

// ElsewhereGroups are, in a deleting record, the groups (and launch
// templates) of the config the swap retires in one environment other
// than the release's, each of its groups with how it served before the
// swap detached anything (as Intent.Attached).
type ElsewhereGroups struct {
	Target   target.Target  `json:"target"`
	Groups   []string       `json:"groups"`
	Attached []StandbyGroup `json:"attached,omitempty"`
}

// Targets is the record of every target environment a project-config
// has deployed to and may still have groups in (naming.TargetsKey):
// Publish and Deploy add their release's before they make anything in
// it, and the swap leaves only its release's once it retired the
// others' fleets, so no environment where ferry made something is ever
// forgotten, whatever crashes between.
type Targets struct {
	Targets []target.Target `json:"targets"`
	// ReleaseID is the release that wrote the record, at UpdatedAt.
	ReleaseID string    `json:"release_id"`
	UpdatedAt time.Time `json:"updated_at"`
}

// AllGroups are the intent's groups in every environment: Groups, then
// each of Elsewhere's.
func (i Intent) AllGroups() []string {
	out := slices.Clone(i.Groups)
	for _, tg := range i.Elsewhere {
		out = append(out, tg.Groups...)
	}
	return out
}

// Standby is the write-ahead record of a bake (naming.StandbyKey): the
// previous groups Bake takes out of their load balancers to stand by,
// each with what it was attached to and what its release names, written
// once before the first is detached, so a rollback puts them back
// whatever AWS shows then.
type Standby struct {
	ReleaseID string         `json:"release_id"`
	Execution string         `json:"execution"`
	Since     time.Time      `json:"since"`
	Groups    []StandbyGroup `json:"groups"`
	// RollbackSince is when a rollback started putting the groups back;
	// RestoredAt when every one of them was healthy in its load balancers
	// again (the release's own groups may leave from then on).
	RollbackSince *time.Time `json:"rollback_since,omitempty"`
	RestoredAt    *time.Time `json:"restored_at,omitempty"`
}

// StandbyGroup is one previous group standing by: its classic load
// balancers and target groups (ARNs), its desired capacity and minimum
// size (which a rollback restores when someone lowered them meanwhile),
// and the processes Bake suspended (those it had not suspended already),
// which a rollback resumes.
type StandbyGroup struct {
	Name          string   `json:"name"`
	LoadBalancers []string `json:"load_balancers,omitempty"`
	TargetGroups  []string `json:"target_groups,omitempty"`
	Desired       int      `json:"desired"`
	Min           int      `json:"min,omitempty"`
	Suspended     []string `json:"suspended,omitempty"`
	// Named are the classic load balancers and target groups the
	// group's release names for its service (the release the current
	// record named when Bake wrote the record; empty for a group it does
	// not name), which the world may have detached it from before the
	// bake. Nil when Bake could not tell, and in records written before
	// it kept them: a rollback then reads the previous release itself.
	Named *Balancers `json:"named,omitempty"`
}

// Balancers are classic load balancers (by name) and target groups (by
// ARN).
type Balancers struct {
	LoadBalancers []string `json:"load_balancers,omitempty"`
	TargetGroups  []string `json:"target_groups,omitempty"`
}

// Ledger reads and writes release records in one deployer bucket. It is
// safe for concurrent use.
type Ledger struct {
	client S3
	bucket string
	store  *object.Deletable
}

// New returns the ledger of bucket.
func New(client S3, bucket string) *Ledger {
	return &Ledger{client: client, bucket: bucket, store: object.NewDeletable(client, bucket, object.Errors{Prefix: "ledger: "})}
}

// PutRelease stores raw, the release exactly as the client uploaded it, at
// naming.ReleaseKey. It writes once (If-None-Match: *): storing the same
// bytes again succeeds, storing different bytes under an existing release
// id is a *failure.BadReleaseError, as is raw larger than
// limits.MaxReleaseBytes.
func (l *Ledger) PutRelease(ctx context.Context, project, config, releaseID string, raw []byte) error {
	key := naming.ReleaseKey(project, config, releaseID)
	if len(raw) > limits.MaxReleaseBytes {
		return failure.BadRelease(fmt.Sprintf("release is %d bytes, over the limit of %d", len(raw), limits.MaxReleaseBytes))
	}
	wrote, err := l.store.Put(ctx, key, raw, object.Write{Once: true, Tagging: naming.ReleaseObjectTagging()})
	if wrote || err != nil {
		return err
	}
	existing, found, err := l.store.Get(ctx, key, limits.MaxReleaseBytes)
	switch {
	case err != nil:
		return err
	case !found:
		return &failure.RetryableError{Op: "ledger: write " + key, Err: errors.New("the release changed while being written")}
	case !bytes.Equal(existing.Body, raw):
		return failure.BadRelease(fmt.Sprintf("release_id: release %s is already stored with different content", releaseID))
	}
	return nil
}

// GetReleaseRaw returns the release bytes as stored. A release that does
// not exist, or is larger than limits.MaxReleaseBytes, is a
// *failure.BadReleaseError.
func (l *Ledger) GetReleaseRaw(ctx context.Context, project, config, releaseID string) ([]byte, error) {
	key := naming.ReleaseKey(project, config, releaseID)
	raw, found, err := l.store.Get(ctx, key, limits.MaxReleaseBytes)
	var tooLarge *object.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		return nil, failure.BadRelease(fmt.Sprintf("release %s in the deployer bucket is larger than %d bytes", releaseID, limits.MaxReleaseBytes))
	case err != nil:
		return nil, err
	case !found:
		return nil, failure.BadRelease(fmt.Sprintf("release %s not found in the deployer bucket", releaseID))
	}
	return raw.Body, nil
}

// GetRelease reads the stored release and decodes it with release.Decode.
// Errors are those of GetReleaseRaw, and release.Decode's
// *failure.BadReleaseError for a stored release that does not decode.
func (l *Ledger) GetRelease(ctx context.Context, project, config, releaseID string) (*release.Release, error) {
	raw, err := l.GetReleaseRaw(ctx, project, config, releaseID)
	if err != nil {
		return nil, err
	}
	r, err := release.Decode(raw)
	if err != nil {
		var named failure.Named
		if errors.As(err, &named) {
			return nil, err
		}
		return nil, failure.BadRelease(fmt.Sprintf("stored release %s: %v", releaseID, err))
	}
	return r, nil
}

// PutUserData stores the rendered user data of one service of a release,
// replacing what was there (rendering is deterministic, so a retry writes
// the same bytes). Data larger than limits.MaxUserDataBytes is a
// *failure.BadReleaseError.
func (l *Ledger) PutUserData(ctx context.Context, project, config, releaseID, service string, data []byte) error {
	if len(data) > limits.MaxUserDataBytes {
		return failure.BadRelease(fmt.Sprintf("services.%s.user_data: rendered user data is %d bytes, over the EC2 limit of %d", service, len(data), limits.MaxUserDataBytes))
	}
	_, err := l.store.Put(ctx, naming.UserDataKey(project, config, releaseID, service), data,
		object.Write{ContentType: "application/octet-stream", Tagging: naming.ReleaseObjectTagging()})
	return err
}

// GetUserData returns the rendered user data of one service of a release.
// An object that does not exist is an error wrapping ErrNotFound.
func (l *Ledger) GetUserData(ctx context.Context, project, config, releaseID, service string) ([]byte, error) {
	key := naming.UserDataKey(project, config, releaseID, service)
	data, found, err := l.store.Get(ctx, key, limits.MaxUserDataBytes)
	switch {
	case err != nil:
		return nil, err
	case !found:
		return nil, fmt.Errorf("ledger: user data of service %s of release %s: %w", service, releaseID, ErrNotFound)
	}
	return data.Body, nil
}

// PutOutcome stores how the execution of o.ReleaseID ended, replacing any
// earlier outcome of that release.
func (l *Ledger) PutOutcome(ctx context.Context, project, config string, o Outcome) error {
	if o.ReleaseID == "" {
		return errors.New("ledger: outcome needs a release id")
	}
	_, err := l.putJSON(ctx, naming.OutcomeKey(project, config, o.ReleaseID), o, expiring())
	return err
}

// GetOutcome reads the outcome of a release; found is false only when none
// was written.
func (l *Ledger) GetOutcome(ctx context.Context, project, config, releaseID string) (Outcome, bool, error) {
	var o Outcome
	found, err := l.getJSON(ctx, naming.OutcomeKey(project, config, releaseID), &o)
	return o, found, err
}

// PutDeploying records the groups Deploy of release i.ReleaseID may
// create (naming.DeployingKey), replacing an earlier record: a retry of
// Deploy plans the same groups; CleanUpFailure adds when it began retiring
// them and the groups it removed (and writes the record when Deploy did
// not).
func (l *Ledger) PutDeploying(ctx context.Context, project, config string, i Intent) error {
	if i.ReleaseID == "" {
		return errors.New("ledger: deploying record needs a release id")
	}
	_, err := l.putJSON(ctx, naming.DeployingKey(project, config, i.ReleaseID), i, expiring())
	return err
}

// GetDeploying reads the groups Deploy of a release may have created;
// found is false when Deploy never recorded any (it created nothing), or
// the record is gone: CleanUpFailure then asks AWS what the release made.
// Any other failure to read it is an error (fail closed).
func (l *Ledger) GetDeploying(ctx context.Context, project, config, releaseID string) (Intent, bool, error) {
	var i Intent
	found, err := l.getJSON(ctx, naming.DeployingKey(project, config, releaseID), &i)
	return i, found, err
}

// CreateDeleting records, once, the previous groups CleanUpSuccess of
// release i.ReleaseID retires (naming.DeletingKey): its point of no
// return. When a record is already there (an earlier attempt wrote it) it
// is left as it is and returned, so every attempt retires the same
// groups; wrote says whether this call wrote it.
func (l *Ledger) CreateDeleting(ctx context.Context, project, config string, i Intent) (got Intent, wrote bool, err error) {
	if i.ReleaseID == "" {
		return Intent{}, false, errors.New("ledger: deleting record needs a release id")
	}
	return createOnce(ctx, l, naming.DeletingKey(project, config, i.ReleaseID), i)
}

// GetDeleting reads the previous groups CleanUpSuccess of a release
// retires; found is false only when it has not started retiring them.
// Any other failure to read it is an error (fail closed: it may be past
// its point of no return).
func (l *Ledger) GetDeleting(ctx context.Context, project, config, releaseID string) (Intent, bool, error) {
	var i Intent
	found, err := l.getJSON(ctx, naming.DeletingKey(project, config, releaseID), &i)
	return i, found, err
}

// CreateStandby records, once, the previous groups Bake of release
// s.ReleaseID takes out of their load balancers (naming.StandbyKey). When
// a record is already there (an earlier attempt wrote it, and may have
// detached the groups since) it is left as it is and returned, so a
// rollback puts back what they were attached to before; wrote says
// whether this call wrote it.
func (l *Ledger) CreateStandby(ctx context.Context, project, config string, sb Standby) (got Standby, wrote bool, err error) {
	if sb.ReleaseID == "" {
		return Standby{}, false, errors.New("ledger: standby record needs a release id")
	}
	return createOnce(ctx, l, naming.StandbyKey(project, config, sb.ReleaseID), sb)
}

// createOnce writes v at key once (If-None-Match: *, expiring with the
// release's objects). When an object is already there (an earlier
// attempt wrote it) it is left as it is and read back into got, so every
// attempt sees the first write; wrote says whether this call wrote it. A
// record that exists but cannot be read yet is retryable.
func createOnce[T any](ctx context.Context, l *Ledger, key string, v T) (got T, wrote bool, err error) {
	wrote, err = l.putJSON(ctx, key, v, object.Write{Once: true, Tagging: naming.ReleaseObjectTagging()})
	switch {
	case err != nil:
		return got, false, err
	case wrote:
		return v, true, nil
	}
	found, err := l.getJSON(ctx, key, &got)
	switch {
	case err != nil:
		return got, false, err
	case !found:
		return got, false, &failure.RetryableError{Op: "ledger: write " + key, Err: errors.New("the record exists but cannot be read yet")}
	}
	return got, false, nil
}

// PutStandby replaces the standby record of release s.ReleaseID with s:
// a rollback's progress.
func (l *Ledger) PutStandby(ctx context.Context, project, config string, s Standby) error {
	if s.ReleaseID == "" {
		return errors.New("ledger: standby record needs a release id")
	}
	_, err := l.putJSON(ctx, naming.StandbyKey(project, config, s.ReleaseID), s, expiring())
	return err
}

// GetStandby reads the standby record of a release; found is false only
// when Bake never took a previous group out of its load balancers. Any
// other failure to read it is an error (fail closed: groups may stand by
// detached, and only the record says where they belong).
func (l *Ledger) GetStandby(ctx context.Context, project, config, releaseID string) (Standby, bool, error) {
	var s Standby
	found, err := l.getJSON(ctx, naming.StandbyKey(project, config, releaseID), &s)
	return s, found, err
}

// PutAnalysis replaces the record of release releaseID's last canary
// analysis with a.
func (l *Ledger) PutAnalysis(ctx context.Context, project, config, releaseID string, a execution.Analysis) error {
	if releaseID == "" {
		return errors.New("ledger: analysis record needs a release id")
	}
	_, err := l.putJSON(ctx, naming.AnalysisKey(project, config, releaseID), a, expiring())
	return err
}

// GetAnalysis reads the record of a release's last canary analysis;
// found is false when none was judged.
func (l *Ledger) GetAnalysis(ctx context.Context, project, config, releaseID string) (execution.Analysis, bool, error) {
	var a execution.Analysis
	found, err := l.getJSON(ctx, naming.AnalysisKey(project, config, releaseID), &a)
	return a, found, err
}

// PutCurrent stores what is deployed now in project/config, replacing the
// previous record.
func (l *Ledger) PutCurrent(ctx context.Context, project, config string, c Current) error {
	if c.ReleaseID == "" {
		return errors.New("ledger: current record needs a release id")
	}
	_, err := l.putJSON(ctx, naming.CurrentKey(project, config), c, object.Write{})
	return err
}

// PutTargets stores the project-config's targets record, replacing the
// previous one. Only the release holding the lock writes it.
func (l *Ledger) PutTargets(ctx context.Context, project, config string, t Targets) error {
	_, err := l.putJSON(ctx, naming.TargetsKey(project, config), t, object.Write{})
	return err
}

// GetTargets reads the project-config's targets record; found is false
// when no release wrote one (nothing deployed since it was kept). A
// record that cannot be read is an error (fail closed: it may name an
// environment where groups run).
func (l *Ledger) GetTargets(ctx context.Context, project, config string) (Targets, bool, error) {
	var t Targets
	found, err := l.getJSON(ctx, naming.TargetsKey(project, config), &t)
	return t, found, err
}

// DriftRecord is what the last drift query saw in a project-config
// (naming.DriftKey): every difference, settling ones included, with when
// it was first seen, so the next query knows since when.
type DriftRecord struct {
	ReleaseID string                `json:"release_id"`
	CheckedAt time.Time             `json:"checked_at"`
	Items     []execution.DriftItem `json:"items"`
}

// PutDrift stores what a drift query saw, replacing the previous record.
func (l *Ledger) PutDrift(ctx context.Context, project, config string, r DriftRecord) error {
	_, err := l.putJSON(ctx, naming.DriftKey(project, config), r, object.Write{})
	return err
}

// GetDrift reads what the last drift query saw; found is false when no
// query ever recorded one. A record that cannot be read is an error.
func (l *Ledger) GetDrift(ctx context.Context, project, config string) (DriftRecord, bool, error) {
	var r DriftRecord
	found, err := l.getJSON(ctx, naming.DriftKey(project, config), &r)
	return r, found, err
}

// HealRecord is the reconciler's record of its heals of a project-config
// (naming.HealKey): the release the last heal healed (Of) and that heal
// (LastHeal), the difference it healed (a drift kind and the service,
// "group_missing web"), how many heals of that difference it started in
// a row, when the last one started, and when a pass last found the fleet
// well since (nil: not yet). A well fleet does not end the row: the same
// difference coming back after a heal is the next heal in it.
type HealRecord struct {
	Of         string     `json:"of"`
	Difference string     `json:"difference,omitempty"`
	InARow     int        `json:"in_a_row"`
	LastAt     time.Time  `json:"last_at"`
	LastHeal   string     `json:"last_heal"`
	WellAt     *time.Time `json:"well_at,omitempty"`
}

// PutHeal stores the heal record, replacing the previous one.
func (l *Ledger) PutHeal(ctx context.Context, project, config string, h HealRecord) error {
	_, err := l.putJSON(ctx, naming.HealKey(project, config), h, object.Write{})
	return err
}

// GetHeal reads the heal record; found is false when the reconciler
// never healed the project-config. A record that cannot be read is an
// error.
func (l *Ledger) GetHeal(ctx context.Context, project, config string) (HealRecord, bool, error) {
	var h HealRecord
	found, err := l.getJSON(ctx, naming.HealKey(project, config), &h)
	return h, found, err
}

// ClearCurrent removes the record of what is deployed in project/config:
// a destroy retired everything (the bucket's versioning keeps the
// record's history). Removing a record that is not there succeeds.
func (l *Ledger) ClearCurrent(ctx context.Context, project, config string) error {
	_, err := l.store.Delete(ctx, "delete", naming.CurrentKey(project, config), "")
	return err
}

// GetCurrent reads what is deployed now in project/config; found is false
// when nothing was ever recorded, or a destroy removed it.
func (l *Ledger) GetCurrent(ctx context.Context, project, config string) (Current, bool, error) {
	var c Current
	found, err := l.getJSON(ctx, naming.CurrentKey(project, config), &c)
	return c, found, err
}

// Configs lists the configs of project that have any object, the
// clients' or the deployer's, sorted by name, following every page of the
// listings; the project's promotion objects (naming.PromotionsSegment)
// are no config.
func (l *Ledger) Configs(ctx context.Context, project string) ([]string, error) {
	seen := map[string]bool{}
	for _, prefix := range []string{naming.ProjectPrefix(project), naming.StatePrefix + naming.ProjectPrefix(project)} {
		configs, err := l.children(ctx, prefix)
		if err != nil {
			return nil, err
		}
		for _, c := range configs {
			seen[c] = naming.IsConfigSegment(c)
		}
	}
	configs := make([]string, 0, len(seen))
	for c, config := range seen {
		if config {
			configs = append(configs, c)
		}
	}
	sort.Strings(configs)
	return configs, nil
}

// ProjectConfig names one project-config.
type ProjectConfig struct {
	Project string `json:"project"`
	Config  string `json:"config"`
}

// ProjectConfigs lists every project-config the deployer keeps records of
// (under naming.StatePrefix: a lock, a current record or a release's
// records), sorted by project, then config, following every page of the
// listings. What clients uploaded without the deployer ever seeing it is
// not listed, nor the deployer's records of no project (a first segment
// starting "_", which no project's does: naming.StartsRoot).
func (l *Ledger) ProjectConfigs(ctx context.Context) ([]ProjectConfig, error) {
	var out []ProjectConfig
	orgs, err := l.children(ctx, naming.StatePrefix)
	if err != nil {
		return nil, err
	}
	for _, org := range orgs {
		if strings.HasPrefix(org, "_") {
			continue
		}
		names, err := l.children(ctx, naming.StatePrefix+org+"/")
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			project := org + "/" + name
			configs, err := l.children(ctx, naming.StatePrefix+naming.ProjectPrefix(project))
			if err != nil {
				return nil, err
			}
			for _, config := range configs {
				out = append(out, ProjectConfig{Project: project, Config: config})
			}
		}
	}
	return out, nil
}

// children lists the next path segments under prefix (the common
// prefixes of a "/"-delimited listing), sorted, following every page.
func (l *Ledger) children(ctx context.Context, prefix string) ([]string, error) {
	var out []string
	p := s3.NewListObjectsV2Paginator(l.client, &s3.ListObjectsV2Input{
		Bucket:    aws.String(l.bucket),
		Prefix:    aws.String(prefix),
		Delimiter: aws.String("/"),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, l.store.Classify("list "+prefix, err)
		}
		for _, cp := range page.CommonPrefixes {
			if seg := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(cp.Prefix), prefix), "/"); seg != "" {
				out = append(out, seg)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// Known reports whether the deployer has any object of project/config
// (a release uploaded, a record written): one listing of at most one key.
// A config nobody ever deployed is not known; a failed listing is an
// error, never "unknown".
func (l *Ledger) Known(ctx context.Context, project, config string) (bool, error) {
	prefix := naming.Prefix(project, config)
	out, err := l.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{
		Bucket: aws.String(l.bucket), Prefix: aws.String(prefix), MaxKeys: aws.Int32(1),
	})
	if err != nil {
		return false, l.store.Classify("list "+prefix, err)
	}
	return len(out.Contents) > 0, nil
}

// Releases lists the ids of the releases stored for project/config (those
// with a release object), newest first by when S3 created the release
// object, ties by id descending, following every page of the listing.
func (l *Ledger) Releases(ctx context.Context, project, config string) ([]string, error) {
	prefix := naming.Prefix(project, config)
	type stored struct {
		id string
		at time.Time
	}
	var found []stored
	p := s3.NewListObjectsV2Paginator(l.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(l.bucket),
		Prefix: aws.String(prefix),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, l.store.Classify("list "+prefix, err)
		}
		for _, obj := range page.Contents {
			key := aws.ToString(obj.Key)
			id, _, ok := strings.Cut(strings.TrimPrefix(key, prefix), "/")
			if ok && id != "" && key == naming.ReleaseKey(project, config, id) {
				found = append(found, stored{id: id, at: aws.ToTime(obj.LastModified)})
			}
		}
	}
	sort.Slice(found, func(i, j int) bool {
		if !found[i].at.Equal(found[j].at) {
			return found[i].at.After(found[j].at)
		}
		return found[i].id > found[j].id
	})
	ids := make([]string, len(found))
	for i, s := range found {
		ids[i] = s.id
	}
	return ids, nil
}

// FindRelease returns the project-configs, among those ProjectConfigs
// lists, that hold a release object of id releaseID: none when no config
// does (release ids carry the time and random digits, so more than one
// is a coincidence the caller must resolve). It lists one key per
// project-config; a failed listing is an error, never "not found".
func (l *Ledger) FindRelease(ctx context.Context, releaseID string) ([]ProjectConfig, error) {
	pcs, err := l.ProjectConfigs(ctx)
	if err != nil {
		return nil, err
	}
	var out []ProjectConfig
	for _, pc := range pcs {
		key := naming.ReleaseKey(pc.Project, pc.Config, releaseID)
		page, err := l.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{
			Bucket: aws.String(l.bucket), Prefix: aws.String(key), MaxKeys: aws.Int32(1),
		})
		if err != nil {
			return nil, l.store.Classify("list "+key, err)
		}
		if len(page.Contents) > 0 && aws.ToString(page.Contents[0].Key) == key {
			out = append(out, pc)
		}
	}
	return out, nil
}

// putJSON writes v as JSON at key as w says; a record larger than
// limits.MaxStateObjectBytes is refused before it is written.
func (l *Ledger) putJSON(ctx context.Context, key string, v any, w object.Write) (wrote bool, err error) {
	body, err := json.Marshal(v)
	if err != nil {
		return false, fmt.Errorf("ledger: encode %s: %w", key, err)
	}
	if len(body) > limits.MaxStateObjectBytes {
		return false, fmt.Errorf("ledger: %s would be %d bytes, over the limit of %d", key, len(body), limits.MaxStateObjectBytes)
	}
	return l.store.Put(ctx, key, body, w)
}

func (l *Ledger) getJSON(ctx context.Context, key string, v any) (bool, error) {
	_, found, err := l.store.GetJSON(ctx, key, limits.MaxStateObjectBytes, "unreadable record", v)
	return found, err
}

// expiring is how a release's own objects are written: tagged as the
// release's (naming.ReleaseObjectTagging), so the bucket's lifecycle rule
// expires them with it.
func expiring() object.Write { return object.Write{Tagging: naming.ReleaseObjectTagging()} }
