package ledger

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/object"
)

// Promotion statuses, of a promotion and of each of its stages.
const (
	PromotionPending   = "pending"   // a stage not reached yet
	PromotionWaiting   = "waiting"   // a stage whose gates hold it back
	PromotionApproval  = "approval"  // a stage waiting for a person's approval
	PromotionDeploying = "deploying" // a stage whose gates held: its wave runs
	PromotionRunning   = "running"   // a promotion under way
	PromotionSucceeded = "succeeded"
	PromotionFailed    = "failed"
	PromotionHalted    = "halted"
)

// PromotionRecord is the deployer's record of a promotion
// (naming.PromotionRecordKey): who started it, what it promotes, and each
// stage's progress, who approved it and how each target's deploy ended.
// Only the deployer writes it; a promoted release is accepted at
// Validate only as it says.
type PromotionRecord struct {
	PromotionID string `json:"promotion_id"`
	ProjectName string `json:"project_name"`
	// Digest is the artifact's; PipelineSHA256 and RequestSHA256 the
	// pipeline's (pipeline.PipelineHash) and the stored request's.
	Digest         string `json:"digest"`
	PipelineSHA256 string `json:"pipeline_sha256"`
	RequestSHA256  string `json:"request_sha256"`
	// StartedBy is the verified caller who started it (its full ARN),
	// StartedByID its unique id (GetCallerIdentity's UserId);
	// StartedByName the name it gave itself.
	StartedBy     string    `json:"started_by"`
	StartedByID   string    `json:"started_by_id,omitempty"`
	StartedByName string    `json:"started_by_name,omitempty"`
	StartedAt     time.Time `json:"started_at"`
	Execution     string    `json:"execution"`
	// Status is PromotionRunning, then how it ended.
	Status  string           `json:"status"`
	EndedAt time.Time        `json:"ended_at,omitzero"`
	Why     string           `json:"why,omitempty"`
	Stages  []PromotionStage `json:"stages"`
}

// PromotionStage is one stage of a promotion.
type PromotionStage struct {
	Config string `json:"config"`
	// Status is one of the Promotion* statuses; Held what holds it back
	// while it waits.
	Status string   `json:"status"`
	Held   []string `json:"held,omitempty"`
	// ApprovalToken is the task token an approval answers while the stage
	// waits for one (the callback pattern).
	ApprovalToken string `json:"approval_token,omitempty"`
	// ApprovedBy is the verified approver's full ARN, ApprovedByID its
	// unique id.
	ApprovedBy   string    `json:"approved_by,omitempty"`
	ApprovedByID string    `json:"approved_by_id,omitempty"`
	ApprovedAt   time.Time `json:"approved_at,omitzero"`
	// ApprovalVerified says the deployer verified the approver by the
	// approval's identity proof (false: a deployer that verifies no
	// proofs took the name the approver gave).
	ApprovalVerified bool `json:"approval_verified,omitempty"`
	// ApprovalRefused is why the approval last read does not count ("" once
	// one counts); ApprovalGivenAt is the created_at of the approval last
	// read, so its approver knows the verdict is on theirs.
	ApprovalRefused string    `json:"approval_refused,omitempty"`
	ApprovalGivenAt time.Time `json:"approval_given_at,omitzero"`
	// ReleasedAt is when its gates held and its wave started; EndedAt
	// when the wave ended.
	ReleasedAt time.Time         `json:"released_at,omitzero"`
	EndedAt    time.Time         `json:"ended_at,omitzero"`
	Targets    []PromotionTarget `json:"targets"`
}

// PromotionTarget is one target of a promotion's stage: its config, and
// its deploy's execution and outcome once known.
type PromotionTarget struct {
	Config    string `json:"config"`
	AccountID string `json:"account_id"`
	Region    string `json:"region"`
	Execution string `json:"execution,omitempty"`
	Outcome   string `json:"outcome,omitempty"`
	Error     string `json:"error,omitempty"`
}

// CreatePromotion writes a promotion's first record once: when one is
// already there (an earlier attempt, or a replay of the request) it is
// returned as it is, wrote false.
func (l *Ledger) CreatePromotion(ctx context.Context, firstConfig string, p PromotionRecord) (got PromotionRecord, wrote bool, err error) {
	return createOnce(ctx, l, naming.PromotionRecordKey(p.ProjectName, firstConfig, p.PromotionID), p)
}

// PutPromotion replaces a promotion's record.
func (l *Ledger) PutPromotion(ctx context.Context, firstConfig string, p PromotionRecord) error {
	_, err := l.putJSON(ctx, naming.PromotionRecordKey(p.ProjectName, firstConfig, p.PromotionID), p, object.Write{Tagging: naming.ReleaseObjectTagging()})
	return err
}

// GetPromotion reads a promotion's record; found is false when the
// deployer never started it. A record that cannot be read is an error.
func (l *Ledger) GetPromotion(ctx context.Context, project, firstConfig, promotionID string) (PromotionRecord, bool, error) {
	var p PromotionRecord
	found, err := l.getJSON(ctx, naming.PromotionRecordKey(project, firstConfig, promotionID), &p)
	return p, found, err
}

// GetClientObject reads an object a client wrote (a promotion's request,
// an approval, a registered pipeline, a halt marker) of at most limit
// bytes; found is false when there is none. Whatever cannot be read is an
// error, never "not found": gates and halts read through it fail closed.
func (l *Ledger) GetClientObject(ctx context.Context, key string, limit int) (body []byte, found bool, err error) {
	obj, found, err := l.store.Get(ctx, key, limit)
	if err != nil || !found {
		return nil, found, err
	}
	return obj.Body, true, nil
}

// PutClientObject writes an object under a client's prefix as the
// deployer: a promoted release (PutRelease does that) or a copy of an
// asset into a target config's prefix. It replaces what is there.
func (l *Ledger) PutClientObject(ctx context.Context, key string, body []byte) error {
	_, err := l.store.Put(ctx, key, body, object.Write{})
	return err
}

// Promotions lists the ids of the promotions recorded whose first stage
// is firstConfig, newest first (ids begin with the time they were made),
// following every page of the listing.
func (l *Ledger) Promotions(ctx context.Context, project, firstConfig string) ([]string, error) {
	prefix := naming.PromotionRecordPrefix(project, firstConfig)
	var ids []string
	p := s3.NewListObjectsV2Paginator(l.client, &s3.ListObjectsV2Input{Bucket: aws.String(l.bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, l.store.Classify("list "+prefix, err)
		}
		for _, obj := range page.Contents {
			if id, ok := strings.CutSuffix(strings.TrimPrefix(aws.ToString(obj.Key), prefix), ".json"); ok && !strings.Contains(id, "/") {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	slices.Reverse(ids)
	return ids, nil
}

// PromotionTurn is the claim of a promotion's turn to run
// (naming.PromotionTurnKey): the promotion that runs after another one
// ended, or before any.
type PromotionTurn struct {
	PromotionID string `json:"promotion_id"`
	Execution   string `json:"execution"`
}

// ClaimPromotionTurn claims the turn after promotion after ("": before
// any) for t, once: when a claim is already there it is left as it is and
// returned, wrote false; the caller's turn is only if got is t's.
func (l *Ledger) ClaimPromotionTurn(ctx context.Context, project, firstConfig, after string, t PromotionTurn) (got PromotionTurn, wrote bool, err error) {
	return createOnce(ctx, l, naming.PromotionTurnKey(project, firstConfig, after), t)
}

// VerifiedApproval is the deployer's record that it verified a person's
// approval of a promotion into a stage when it was given
// (naming.VerifiedApprovalKey): with the approval of ApprovalSHA256
// stored where approvers write it (naming.ApprovalKey), the gate counts
// it as it is, without the approval's identity proof, which expires 15
// minutes after it was signed. Only the deployer writes it, once.
type VerifiedApproval struct {
	PromotionID string `json:"promotion_id"`
	Stage       string `json:"stage"`
	Digest      string `json:"digest"`
	// ApprovalSHA256 is the hex SHA-256 of the approval's bytes as given.
	ApprovalSHA256 string `json:"approval_sha256"`
	// ApprovedBy is the approver's full ARN as STS named it, ApprovedByID
	// its unique id; ApprovedByName the name the approver gave.
	ApprovedBy     string `json:"approved_by"`
	ApprovedByID   string `json:"approved_by_id,omitempty"`
	ApprovedByName string `json:"approved_by_name,omitempty"`
	// Verified says the deployer verified the approver by the identity
	// proof (false: a deployer that verifies no proofs took the name
	// given).
	Verified bool `json:"verified"`
	// GivenAt is the approval's created_at; VerifiedAt when the deployer
	// verified it.
	GivenAt    time.Time `json:"given_at"`
	VerifiedAt time.Time `json:"verified_at"`
}

// CreateVerifiedApproval writes the verified approval a of the promotion
// whose first stage is firstConfig once: when it is there already (the
// same approval, verified before) it is left as it is and returned, wrote
// false.
func (l *Ledger) CreateVerifiedApproval(ctx context.Context, project, firstConfig string, a VerifiedApproval) (got VerifiedApproval, wrote bool, err error) {
	return createOnce(ctx, l, naming.VerifiedApprovalKey(project, firstConfig, a.PromotionID, a.Stage, a.ApprovalSHA256), a)
}

// GetVerifiedApproval reads the verified approval of the promotion into
// stage whose bytes have the hex SHA-256 sum; found is false when the
// deployer verified none. A record that cannot be read is an error: a
// gate reads it fail closed.
func (l *Ledger) GetVerifiedApproval(ctx context.Context, project, firstConfig, promotionID, stage, sum string) (VerifiedApproval, bool, error) {
	var a VerifiedApproval
	found, err := l.getJSON(ctx, naming.VerifiedApprovalKey(project, firstConfig, promotionID, stage, sum), &a)
	return a, found, err
}
