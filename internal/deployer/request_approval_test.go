package deployer

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/events"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// atProduction is a promotion at production's gate with only its
// approval missing: staging swapped 2h ago, its gate alarm OK.
func atProduction(t *testing.T, mutate ...func(*pipeline.Pipeline)) *promo {
	t.Helper()
	pr := newPromo(t, mutate...).started()
	pr.atStage(2, epoch.Add(-2*time.Hour))
	pr.putStagingAlarm()
	return pr
}

// TestApprovalVerdict: Gate reads and verifies production's approval and
// records its verdict in the stage: who approved, verified by the
// approval's identity proof, and when the approval was given; or why it
// does not count (for another promotion, stage or artifact, by a
// principal not among the approvers or, with separate_approver, by the
// promotion's starter; one that does not decode), the stage still
// waiting for an approval. A bad approval never fails the promotion.
func TestApprovalVerdict(t *testing.T) {
	for _, tt := range []struct {
		name    string
		gates   func(g *pipeline.Gates)
		approve func(a *pipeline.Approval)
		refused string // "" when it counts
	}{
		{"counts", nil, nil, ""},
		{"of another artifact", nil, func(a *pipeline.Approval) { a.Digest = "beef" }, "is of promotion " + promotionID + ", stage production, artifact beef: not this one"},
		{"of another stage", nil, func(a *pipeline.Approval) { a.Stage = "staging" }, "stage staging"},
		{"by someone not among the approvers", func(g *pipeline.Gates) { g.Approvers = []string{"arn:aws:iam::111111111111:role/release-managers"} }, nil,
			"is by " + caller + ", who is not among the stage's approvers (arn:aws:iam::111111111111:role/release-managers)"},
		{"by the starter, with separate_approver", func(g *pipeline.Gates) { g.SeparateApprover = true }, nil,
			"started the promotion: the stage requires another approver (separate_approver)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr := atProduction(t, func(p *pipeline.Pipeline) {
				if tt.gates != nil {
					tt.gates(p.Stages[2].Gates)
				}
			})
			var mutate []func(*pipeline.Approval)
			if tt.approve != nil {
				mutate = append(mutate, tt.approve)
			}
			a := pr.approve("production", mutate...)
			require.NoError(t, pr.task(execution.TaskGate), "a bad approval does not fail the promotion")
			stage := pr.record().Stages[2]
			assert.True(t, a.CreatedAt.Equal(stage.ApprovalGivenAt), "the verdict names the approval it is on")
			if tt.refused == "" {
				assert.Equal(t, ledger.PromotionDeploying, stage.Status)
				assert.Equal(t, [3]string{caller, callerID, ""}, [3]string{stage.ApprovedBy, stage.ApprovedByID, stage.ApprovalRefused})
				assert.True(t, stage.ApprovalVerified)
				assert.Equal(t, pr.h.clk.Now(), stage.ApprovedAt)
				return
			}
			assert.Equal(t, ledger.PromotionApproval, stage.Status, "still waiting for an approval")
			assert.Empty(t, stage.ApprovedBy)
			assert.Contains(t, stage.ApprovalRefused, tt.refused)
			require.Len(t, stage.Held, 1)
			assert.Contains(t, stage.Held[0], "the approval given does not count: ")
			assert.Contains(t, stage.Held[0], tt.refused)
		})
	}
}

// TestApprovalThatDoesNotDecode: an approval object that is no approval
// is refused, saying so; the promotion goes on waiting.
func TestApprovalThatDoesNotDecode(t *testing.T) {
	pr := atProduction(t)
	require.NoError(t, pr.h.ledger.PutClientObject(t.Context(), naming.ApprovalKey(project, "production", promotionID), []byte("not json")))
	require.NoError(t, pr.task(execution.TaskGate))
	stage := pr.record().Stages[2]
	assert.Equal(t, ledger.PromotionApproval, stage.Status)
	assert.Contains(t, stage.ApprovalRefused, "does not decode")
}

// TestApprovalProofExpires: an approval's identity proof is a pre-signed
// sts:GetCallerIdentity, which STS accepts for 15 minutes after it was
// signed ("By default STS signs the url for 15 minutes": the AWS CLI's
// aws eks get-token, awscli/customizations/eks/get_token.py; AWS STS API
// Reference, GetCallerIdentity). Verified by the simulated STS, which
// checks signatures and that expiry (sim.ProofSTS): an approval read 14
// minutes after it was given counts, as bob, verified; one read 16
// minutes after is refused as expired and never counts. So an approval
// must be verified when given: ferry pipeline approve asks VerifyApproval
// (TestVerifyApprovalWhenGiven).
func TestApprovalProofExpires(t *testing.T) {
	for _, tt := range []struct {
		name    string
		after   time.Duration
		refused string
	}{
		{"read 14 minutes after", 14 * time.Minute, ""},
		{"read 16 minutes after", 16 * time.Minute, "ExpiredToken"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr := atProduction(t)
			const bob, bobID = "arn:aws:iam::" + account + ":user/bob", "AIDAEXAMPLEBOB"
			require.NoError(t, pr.h.world.AddAccessKey(bob, bobID, "AKIDBOB", "bob-secret"))
			pr.h.d.cfg.Identities = identity.Verifier{Client: pr.h.world.ProofSTS()}
			signer := identity.Signer{Credentials: credentials.NewStaticCredentialsProvider("AKIDBOB", "bob-secret", ""), Region: region, Clock: pr.h.clk}
			pr.approve("production", func(a *pipeline.Approval) {
				sum, err := a.IdentityHash()
				require.NoError(t, err)
				a.Identity, err = signer.Prove(t.Context(), sum)
				require.NoError(t, err)
			})
			pr.h.clk.Advance(tt.after)
			require.NoError(t, pr.task(execution.TaskGate))
			stage := pr.record().Stages[2]
			if tt.refused == "" {
				assert.Equal(t, [2]string{bob, bobID}, [2]string{stage.ApprovedBy, stage.ApprovedByID})
				assert.True(t, stage.ApprovalVerified)
				return
			}
			assert.Empty(t, stage.ApprovedBy)
			assert.Contains(t, stage.ApprovalRefused, "has no valid identity proof")
			assert.Contains(t, stage.ApprovalRefused, tt.refused)
		})
	}
}

// TestRequestApproval: RequestApproval records the task token the
// stage's approval answers (ferry pipeline approve sends it), the stage
// waiting for its approval; without a token (no callback) it is refused
// and nothing is recorded.
func TestRequestApproval(t *testing.T) {
	for _, tt := range []struct {
		name  string
		token string
	}{
		{"a token", "tok-1"},
		{"no token", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr := atProduction(t)
			require.NoError(t, pr.task(execution.TaskGate))
			in, err := json.Marshal(pr.st)
			require.NoError(t, err)
			_, err = pr.h.d.Invoke(t.Context(), execution.Request{Task: execution.TaskRequestApproval, Input: in, Execution: pr.x.ctx, TaskToken: tt.token})
			stage := pr.record().Stages[2]
			assert.Equal(t, ledger.PromotionApproval, stage.Status)
			if tt.token == "" {
				var internal *failure.InternalError
				require.ErrorAs(t, err, &internal)
				assert.Empty(t, stage.ApprovalToken, "nothing recorded")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.token, stage.ApprovalToken)
		})
	}
}

// TestMayApprove: with separate_approver, the promotion's starter may not
// approve, known by its ARN or, under another ARN (a new session of the
// same role), its unique id; another principal may; an approver must
// match the stage's approvers.
func TestMayApprove(t *testing.T) {
	rec := ledger.PromotionRecord{StartedBy: "arn:aws:sts::111111111111:assumed-role/deployer/alice", StartedByID: "AROAROLE:alice"}
	separate := &pipeline.Gates{Approval: true, SeparateApprover: true}
	named := &pipeline.Gates{Approval: true, Approvers: []string{"arn:aws:iam::111111111111:user/bob"}}
	for _, tt := range []struct {
		name   string
		g      *pipeline.Gates
		caller identity.Caller
		want   string // "" when it may
	}{
		{"the starter by ARN", separate, identity.Caller{ARN: rec.StartedBy}, "started the promotion"},
		{"the starter by unique id", separate, identity.Caller{ARN: "arn:aws:sts::111111111111:assumed-role/deployer/alice2", UserID: "AROAROLE:alice"}, "started the promotion"},
		{"another principal", separate, identity.Caller{ARN: "arn:aws:iam::111111111111:user/bob", UserID: "AIDABOB"}, ""},
		{"another principal without a unique id", separate, identity.Caller{ARN: "arn:aws:iam::111111111111:user/bob"}, ""},
		{"an approver named", named, identity.Caller{ARN: "arn:aws:iam::111111111111:user/bob"}, ""},
		{"not among the approvers", named, identity.Caller{ARN: "arn:aws:iam::111111111111:user/carol"}, "is not among the stage's approvers"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := mayApprove(tt.g, tt.caller, rec)
			if tt.want == "" {
				assert.Empty(t, got)
				return
			}
			assert.Contains(t, got, tt.want)
		})
	}
}

// TestApprovalReceivedAnnouncedOnce: the Stage Approved deploy event is
// put once, when an approval first counts, naming who approved: not
// while the stage waits with none given, nor again when Gate runs once
// more with the approval already recorded (a retried task).
func TestApprovalReceivedAnnouncedOnce(t *testing.T) {
	pr := atProduction(t)
	announced := func() []string {
		var out []string
		for _, ev := range pr.h.world.BusEvents() {
			if ev.DetailType == events.ApprovalReceived.DetailType {
				out = append(out, string(ev.Detail))
			}
		}
		return out
	}
	for _, step := range []struct {
		name    string
		approve bool
		want    int
	}{
		{"waiting, no approval given", false, 0},
		{"the approval counts", true, 1},
		{"Gate again, the approval recorded", false, 1},
	} {
		if step.approve {
			pr.approve("production")
		}
		require.NoError(t, pr.task(execution.TaskGate), step.name)
		got := announced()
		require.Len(t, got, step.want, step.name)
		if step.want > 0 {
			by := pr.record().Stages[2].ApprovedBy
			require.NotEmpty(t, by, step.name)
			assert.Contains(t, got[0], `"approved_by":"`+by+`"`, step.name)
		}
	}
}
