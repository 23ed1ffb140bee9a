package deployer

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

const bob, bobID = "arn:aws:iam::" + account + ":user/bob", "AIDAEXAMPLEBOB"

// givenBy makes bob's approval of stage, its proof signed now by the
// simulated STS's key for bob (sim.ProofSTS checks signatures and their
// 15 minutes, AWS STS API Reference, GetCallerIdentity), which the
// deployer verifies.
func givenBy(t *testing.T, pr *promo, stage string) json.RawMessage {
	t.Helper()
	require.NoError(t, pr.h.world.AddAccessKey(bob, bobID, "AKIDBOB", "bob-secret"))
	pr.h.d.cfg.Identities = identity.Verifier{Client: pr.h.world.ProofSTS()}
	signer := identity.Signer{Credentials: credentials.NewStaticCredentialsProvider("AKIDBOB", "bob-secret", ""), Region: region, Clock: pr.h.clk}
	a := pipeline.Approval{PromotionID: promotionID, Stage: stage, Digest: pr.record().Digest, CreatedAt: pr.h.clk.Now().UTC(), CreatedBy: "bob"}
	sum, err := a.IdentityHash()
	require.NoError(t, err)
	a.Identity, err = signer.Prove(t.Context(), sum)
	require.NoError(t, err)
	raw, err := json.Marshal(a)
	require.NoError(t, err)
	return raw
}

// askApproval runs VerifyApproval on the approval given, as ferry
// pipeline approve's query does.
func askApproval(pr *promo, given json.RawMessage) (ledger.VerifiedApproval, error) {
	var v ledger.VerifiedApproval
	out, err := pr.x.invoke(execution.TaskVerifyApproval, execution.ApprovalInput{Approval: execution.ApprovalQuery{
		ProjectName: project, FirstConfig: "development", Given: given}})
	if err == nil {
		err = json.Unmarshal(out, &v)
	}
	return v, err
}

// store stores the approval given where approvers write it, as ferry
// pipeline approve does once the deployer verified it.
func store(t *testing.T, pr *promo, stage string, given json.RawMessage) {
	t.Helper()
	require.NoError(t, pr.h.ledger.PutClientObject(t.Context(), naming.ApprovalKey(project, stage, promotionID), given))
}

// verifiedOf reads the verified record of the approval given, if any.
func verifiedOf(t *testing.T, pr *promo, stage string, given json.RawMessage) (ledger.VerifiedApproval, bool) {
	t.Helper()
	var a pipeline.Approval
	require.NoError(t, json.Unmarshal(given, &a))
	sum, err := a.Hash()
	require.NoError(t, err)
	v, found, err := pr.h.ledger.GetVerifiedApproval(t.Context(), project, "development", promotionID, stage, sum)
	require.NoError(t, err)
	return v, found
}

// TestVerifyApprovalWhenGiven: an approval of production given while it
// waits at its gates is verified as it is given and recorded verified
// (bob, verified, when, of the approval's sum), under the deployer's
// prefix; stored where approvers write it, the gate counts it an hour
// later, though its proof expired after 15 minutes, as approved when it
// was given.
func TestVerifyApprovalWhenGiven(t *testing.T) {
	pr := atProduction(t)
	require.NoError(t, pr.task(execution.TaskGate))
	require.Equal(t, ledger.PromotionApproval, pr.record().Stages[2].Status)
	given := pr.h.clk.Now()
	raw := givenBy(t, pr, "production")
	v, err := askApproval(pr, raw)
	require.NoError(t, err)
	assert.Equal(t, [3]string{bob, bobID, "bob"}, [3]string{v.ApprovedBy, v.ApprovedByID, v.ApprovedByName})
	assert.True(t, v.Verified)
	assert.True(t, given.Equal(v.VerifiedAt) && given.Equal(v.GivenAt))
	stored, found := verifiedOf(t, pr, "production", raw)
	require.True(t, found)
	assert.Equal(t, v, stored)

	store(t, pr, "production", raw)
	pr.h.clk.Advance(time.Hour)
	require.NoError(t, pr.task(execution.TaskGate))
	stage := pr.record().Stages[2]
	assert.Equal(t, ledger.PromotionDeploying, stage.Status, "counted without its expired proof")
	assert.Equal(t, [2]string{bob, bobID}, [2]string{stage.ApprovedBy, stage.ApprovedByID})
	assert.True(t, stage.ApprovalVerified)
	assert.True(t, given.Equal(stage.ApprovedAt), "approved when given")
}

// TestVerifiedApprovalNeedsItsApproval: a verified record counts only
// with the very approval it is of stored where approvers write it. One
// whose approval was never stored (a caller who may start the query but
// not write approvals: IAM decides who may approve) leaves the stage
// waiting for an approval; one whose stored approval differs (edited
// after it was verified) is verified anew, and its expired proof refused.
func TestVerifiedApprovalNeedsItsApproval(t *testing.T) {
	for _, tt := range []struct {
		name    string
		stored  func(t *testing.T, raw json.RawMessage) json.RawMessage // nil: none stored
		refused string
	}{
		{"never stored", nil, ""},
		{"another approval stored", func(t *testing.T, raw json.RawMessage) json.RawMessage {
			return edited(t, raw, func(a *pipeline.Approval) { a.CreatedBy = "mallory" })
		}, "has no valid identity proof"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr := atProduction(t)
			require.NoError(t, pr.task(execution.TaskGate))
			raw := givenBy(t, pr, "production")
			_, err := askApproval(pr, raw)
			require.NoError(t, err)
			if tt.stored != nil {
				store(t, pr, "production", tt.stored(t, raw))
			}
			pr.h.clk.Advance(time.Hour)
			require.NoError(t, pr.task(execution.TaskGate))
			stage := pr.record().Stages[2]
			assert.Equal(t, ledger.PromotionApproval, stage.Status, "still waiting for an approval")
			assert.Empty(t, stage.ApprovedBy)
			if tt.refused != "" {
				assert.Contains(t, stage.ApprovalRefused, tt.refused)
			}
		})
	}
}

// TestVerifyApprovalRefused: an approval that cannot count is refused as
// it is given (a BadReleaseError, so the query ends FailureClean and the
// client exits 3) and nothing is written: a proof expired when the
// deployer reads it, an approval of a stage without an approval gate, of
// a stage not waiting at its gates, of another artifact, of a promotion
// not recorded.
func TestVerifyApprovalRefused(t *testing.T) {
	for _, tt := range []struct {
		name  string
		stage string
		gate  bool // run Gate first: production waits for its approval
		edit  func(t *testing.T, pr *promo, given json.RawMessage) json.RawMessage
		want  string
	}{
		{"expired proof", "production", true, func(_ *testing.T, pr *promo, g json.RawMessage) json.RawMessage {
			pr.h.clk.Advance(16 * time.Minute)
			return g
		}, "the approval has no valid identity proof"},
		{"no approval gate", "staging", true, nil, "stage staging has no approval gate (gates.approval)"},
		{"the first stage, no approval gate", "development", true, nil, "stage development has no approval gate (gates.approval)"},
		{"a stage the pipeline does not have", "qa", true, nil, "promotion " + promotionID + ` has no stage "qa"`},
		{"not waiting at its gates", "production", false, nil, "stage production of promotion " + promotionID + " is pending: an approval is given while the stage waits at its gates"},
		{"another artifact", "production", true, func(t *testing.T, _ *promo, g json.RawMessage) json.RawMessage {
			return edited(t, g, func(a *pipeline.Approval) { a.Digest = "beef" })
		}, "is of promotion " + promotionID + ", stage production, artifact beef: not this one"},
		{"no such promotion", "production", true, func(t *testing.T, _ *promo, g json.RawMessage) json.RawMessage {
			return edited(t, g, func(a *pipeline.Approval) { a.PromotionID = "20260301T115900Z-zz" })
		}, "no promotion 20260301T115900Z-zz of " + project + " is recorded"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr := atProduction(t)
			if tt.gate {
				require.NoError(t, pr.task(execution.TaskGate))
			}
			given := givenBy(t, pr, tt.stage)
			if tt.edit != nil {
				given = tt.edit(t, pr, given)
			}
			_, err := askApproval(pr, given)
			require.Error(t, err)
			var bad *failure.BadReleaseError
			require.ErrorAs(t, err, &bad)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), "nothing written")
			_, found := verifiedOf(t, pr, tt.stage, given)
			assert.False(t, found, "nothing written")
		})
	}
}

// edited is the approval given, changed by mutate (its proof kept: bound
// to the approval as signed).
func edited(t *testing.T, given json.RawMessage, mutate func(*pipeline.Approval)) json.RawMessage {
	t.Helper()
	var a pipeline.Approval
	require.NoError(t, json.Unmarshal(given, &a))
	mutate(&a)
	raw, err := json.Marshal(a)
	require.NoError(t, err)
	return raw
}

// TestVerifiedApprovalCountsOnlyForWhatItNames: a verified record found
// under the stage's approval counts only when it names this promotion,
// this stage and this artifact; one naming another (copied or edited in
// the records) is refused, saying so, and the stage goes on waiting for
// an approval.
func TestVerifiedApprovalCountsOnlyForWhatItNames(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(v *ledger.VerifiedApproval)
	}{
		{"another promotion", func(v *ledger.VerifiedApproval) { v.PromotionID = "20260301T000000Z-other" }},
		{"another stage", func(v *ledger.VerifiedApproval) { v.Stage = "staging" }},
		{"another artifact", func(v *ledger.VerifiedApproval) { v.Digest = strings.Repeat("b", 64) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr := atProduction(t)
			require.NoError(t, pr.task(execution.TaskGate))
			raw := givenBy(t, pr, "production")
			v, err := askApproval(pr, raw)
			require.NoError(t, err)
			store(t, pr, "production", raw)
			tt.edit(&v)
			body, err := json.Marshal(v)
			require.NoError(t, err)
			require.NoError(t, pr.h.ledger.PutClientObject(t.Context(),
				naming.VerifiedApprovalKey(project, "development", promotionID, "production", v.ApprovalSHA256), body))

			require.NoError(t, pr.task(execution.TaskGate))
			stage := pr.record().Stages[2]
			assert.Equal(t, ledger.PromotionApproval, stage.Status, "still waiting for an approval")
			assert.Empty(t, stage.ApprovedBy)
			assert.Contains(t, stage.ApprovalRefused, "the verified approval is of promotion "+v.PromotionID+", stage "+v.Stage)
		})
	}
}

// TestVerifyApprovalIncomplete: a query that names no project or first
// config, or an approval that names no promotion or stage, is refused as
// bad input, saying what is missing, and nothing is written.
func TestVerifyApprovalIncomplete(t *testing.T) {
	for _, tt := range []struct {
		name           string
		project, first string
		edit           func(a *pipeline.Approval)
	}{
		{"no project", "", "development", nil},
		{"no first config", project, "", nil},
		{"no promotion", project, "development", func(a *pipeline.Approval) { a.PromotionID = "" }},
		{"no stage", project, "development", func(a *pipeline.Approval) { a.Stage = "" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr := atProduction(t)
			require.NoError(t, pr.task(execution.TaskGate))
			given := givenBy(t, pr, "production")
			if tt.edit != nil {
				given = edited(t, given, tt.edit)
			}
			_, err := pr.x.invoke(execution.TaskVerifyApproval, execution.ApprovalInput{Approval: execution.ApprovalQuery{
				ProjectName: tt.project, FirstConfig: tt.first, Given: given}})
			var bad *failure.BadReleaseError
			require.ErrorAs(t, err, &bad)
			assert.Contains(t, err.Error(), "the query names no project, first config, promotion or stage")
			_, found := verifiedOf(t, pr, "production", given)
			assert.False(t, found, "nothing written")
		})
	}
}

// TestVerifyApprovalNotRecorded: an approval whose verified record S3
// refuses to write is not reported verified: VerifyApproval fails, so
// ferry pipeline approve stores nothing and the stage goes on waiting.
func TestVerifyApprovalNotRecorded(t *testing.T) {
	pr := atProduction(t)
	require.NoError(t, pr.task(execution.TaskGate))
	given := givenBy(t, pr, "production")
	pr.h.store.Deny = func(op, _ string) bool { return op == "PutObject" }
	_, err := askApproval(pr, given)
	pr.h.store.Deny = nil
	require.Error(t, err)
	assert.Contains(t, err.Error(), "AccessDenied")
	_, found := verifiedOf(t, pr, "production", given)
	assert.False(t, found)
}
