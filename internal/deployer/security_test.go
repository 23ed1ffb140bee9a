package deployer

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/target"
	"github.com/ferryhq/ferry/internal/tuning"
)

// TestForgedRequestsChangeNothing invokes the deployer directly, as anyone
// allowed lambda:InvokeFunction could, with a State it did not make: the
// victim's release is serving, and every forged request must fail with an
// InternalError (nothing a state machine execution sends fails so) and
// leave the fleet, the lock and every record as they were. Step Functions
// keeps an execution's input immutable and reports it with
// DescribeExecution (AWS Step Functions API Reference: DescribeExecution,
// "input": the string that contains the JSON input data of the
// execution); that is what the deployer checks a request against.
func TestForgedRequestsChangeNothing(t *testing.T) {
	tasks := []string{
		execution.TaskLock, execution.TaskValidateResources, execution.TaskPublish, execution.TaskDeploy,
		execution.TaskCleanUpSuccess, execution.TaskCleanUpFailure, execution.TaskReleaseLock,
	}
	tests := []struct {
		name string
		// forge returns the request's execution context and State, given
		// the victim's serving release and a running execution of another
		// release the attacker controls.
		forge func(h *harness, victim *run, mine *run) (execution.Context, *execution.State)
		want  string
	}{
		{
			name: "the victim's release under the attacker's running execution",
			forge: func(h *harness, victim, mine *run) (execution.Context, *execution.State) {
				st := *victim.state
				return mine.ctx, &st
			},
			want: "runs release " + project + "/" + config + "/",
		},
		{
			name: "the victim's execution, which has ended",
			forge: func(h *harness, victim, mine *run) (execution.Context, *execution.State) {
				h.executions.byARN[victim.ctx.ID].Status = sfntypes.ExecutionStatusSucceeded
				st := *victim.state
				return victim.ctx, &st
			},
			want: "is SUCCEEDED, not RUNNING",
		},
		{
			name: "an execution that does not exist",
			forge: func(h *harness, victim, mine *run) (execution.Context, *execution.State) {
				ctx := victim.ctx
				ctx.ID += "-forged"
				st := *victim.state
				return ctx, &st
			},
			want: "cannot be described",
		},
		{
			name: "an execution of another state machine",
			forge: func(h *harness, victim, mine *run) (execution.Context, *execution.State) {
				h.executions.byARN[victim.ctx.ID].StateMachineArn = aws.String("arn:aws:states:us-east-1:111111111111:stateMachine:mine")
				h.executions.byARN[victim.ctx.ID].Status = sfntypes.ExecutionStatusRunning
				st := *victim.state
				return victim.ctx, &st
			},
			want: "not to the deployer's state machine",
		},
		{
			name: "a redriven execution",
			forge: func(h *harness, victim, mine *run) (execution.Context, *execution.State) {
				h.executions.byARN[victim.ctx.ID].Status = sfntypes.ExecutionStatusRunning
				h.executions.byARN[victim.ctx.ID].RedriveCount = aws.Int32(1)
				st := *victim.state
				return victim.ctx, &st
			},
			want: "was redriven",
		},
	}
	for _, tt := range tests {
		for _, task := range tasks {
			t.Run(tt.name+"/"+task, func(t *testing.T) {
				h := newHarness(t)
				victim := h.start(h.baseRelease())
				victim.succeed()
				// The attacker's own release, running: it has passed
				// Validate and holds nothing else.
				mine := h.start(h.baseRelease())
				require.NoError(t, mine.step(execution.TaskValidate))

				before := h.snapshot()
				objects := h.objects(t)
				ctx, st := tt.forge(h, victim, mine)
				st.Deployed = true
				st.Error = &execution.Error{Error: failure.NameDeploy, Cause: "forged"}
				raw, err := json.Marshal(st)
				require.NoError(t, err)
				_, err = h.d.Invoke(t.Context(), execution.Request{Task: task, Input: raw, Execution: ctx})

				var internal *failure.InternalError
				require.ErrorAs(t, err, &internal)
				assert.Contains(t, err.Error(), tt.want)
				assert.Equal(t, before, h.snapshot(), "the fleet changed")
				assert.Equal(t, objects, h.objects(t), "the deployer bucket changed")
			})
		}
	}
}

// TestStateTargetIsNeverTrusted: a State whose target names another
// account (as a State altered in flight would) deploys into the release's
// own target, never into the one the State names.
func TestStateTargetIsNeverTrusted(t *testing.T) {
	h := newHarness(t)
	x := h.start(h.baseRelease())
	require.NoError(t, x.steps(execution.TaskValidate, execution.TaskLock, execution.TaskValidateResources, execution.TaskPublish))
	x.state.Target = target.Target{AccountID: "222222222222", Region: region}
	x.state.Services = []string{"web", "db"}
	require.NoError(t, x.step(execution.TaskDeploy))
	assert.Equal(t, target.Target{AccountID: account, Region: region}, x.state.Target)
	assert.Equal(t, []string{"web"}, x.state.Services)
	assert.Contains(t, h.groups(), naming.GroupName(project, config, "web", x.state.ReleaseID))
	for _, a := range h.world.Snapshot().Accounts {
		if a.Account == "222222222222" {
			assert.Empty(t, a.Groups, "nothing reached the account the State named")
		}
	}
}

// TestUserDataSwappedAfterPublishIsNotLaunched: someone who may write the
// deployer bucket replaces a service's rendered user data between Publish
// and Deploy. Deploy renders the user data from the verified release, so
// what launches is the release's.
func TestUserDataSwappedAfterPublishIsNotLaunched(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	x := h.start(r)
	require.NoError(t, x.steps(execution.TaskValidate, execution.TaskLock, execution.TaskValidateResources, execution.TaskPublish))
	_, err := h.s3.PutObject(t.Context(), &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(naming.UserDataKey(project, config, r.ReleaseID, "web")),
		Body: strings.NewReader("#!/bin/sh\n" + sim.UserDataMarker + " " + string(sim.NeverHealthy) + "\n"),
	})
	require.NoError(t, err)
	require.NoError(t, x.step(execution.TaskDeploy))
	_, err = x.untilHealthy(200)
	require.NoError(t, err, "the release's own user data runs, and is healthy")
	group := h.groups()[naming.GroupName(project, config, "web", r.ReleaseID)]
	require.NotEmpty(t, group.Instances)
	for _, i := range group.Instances {
		assert.NotEqual(t, sim.NeverHealthy, i.Behavior, "instance %s runs the swapped user data", i.ID)
	}
}

// TestReleaseConsumedAtFirstSight: a release is consumed by the first
// execution that validates it, whatever becomes of that execution; another
// execution of it is refused at Validate, before it takes the lock.
func TestReleaseConsumedAtFirstSight(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	first := h.start(r)
	require.NoError(t, first.step(execution.TaskValidate))
	// The first execution dies before Lock; the same input is started
	// again under another name.
	replay := h.startAs(r, "replayed")
	err := replay.step(execution.TaskValidate)
	var bad *failure.BadReleaseError
	require.ErrorAs(t, err, &bad)
	assert.Contains(t, err.Error(), "already ran (execution "+first.ctx.ID+")")

	// The first execution itself goes on: a retry of its Validate and its
	// Lock accept the marker it wrote.
	require.NoError(t, first.step(execution.TaskValidate))
	require.NoError(t, first.step(execution.TaskLock))
}

// objects returns the deployer bucket's keys and ETags.
func (h *harness) objects(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	p := s3.NewListObjectsV2Paginator(h.s3, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(t.Context())
		require.NoError(t, err)
		for _, o := range page.Contents {
			out[aws.ToString(o.Key)] = aws.ToString(o.ETag)
		}
	}
	return out
}

// TestTargetCallsNameTheVerifiedCaller: every call the deployer makes in
// the target account, from the role sessions of a release, carries the
// source identity of the caller Validate verified (naming.SourceIdentity),
// as CloudTrail records it (userIdentity.sessionContext.sourceIdentity,
// "Monitor and control actions taken with assumed roles", IAM User
// Guide).
func TestTargetCallsNameTheVerifiedCaller(t *testing.T) {
	h := newHarness(t)
	x := h.start(h.baseRelease())
	require.NoError(t, x.steps(execution.TaskValidate, execution.TaskLock, execution.TaskValidateResources, execution.TaskPublish, execution.TaskDeploy))
	_, err := x.untilHealthy(200)
	require.NoError(t, err)
	require.NoError(t, x.step(execution.TaskCleanUpSuccess))

	want := naming.SourceIdentity(caller, callerID)
	require.Equal(t, callerID+"@"+account, want)
	assumes, calls := 0, 0
	for _, c := range h.world.CallLog() {
		switch {
		case c.Op == "AssumeRole":
			assumes++
			assert.Equal(t, want, c.SourceIdentity, "AssumeRole sets the source identity")
			var actions []string
			for _, a := range c.Auth {
				actions = append(actions, a.Action)
			}
			assert.Contains(t, actions, "sts:SetSourceIdentity")
		case c.Principal != "":
			calls++
			assert.Equal(t, want, c.SourceIdentity, "%s %s", c.Service, c.Op)
		}
	}
	assert.Positive(t, assumes)
	assert.Positive(t, calls)
}

// overwriteRelease replaces the stored release.json of r with its own
// content, user data changed, as anyone who may write the project's
// prefix could (a PutObject without If-None-Match).
func (h *harness) overwriteRelease(r *release.Release, userData string) *release.Release {
	h.t.Helper()
	evil := r.Clone()
	evil.UserData = userData
	raw, err := json.Marshal(evil)
	require.NoError(h.t, err)
	_, err = h.s3.PutObject(h.t.Context(), &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(naming.ReleaseKey(r.ProjectName, r.ConfigName, r.ReleaseID)), Body: bytes.NewReader(raw),
	})
	require.NoError(h.t, err)
	return evil
}

// TestForgedHealRefused is the attack on heals: Mallory overwrites the
// deployed release.json with new user data, uploads a copy of it as a
// heal (created_by the reconciler, heal_of the deployed release, no
// identity proof) and starts it with the Step Functions API. Validate
// refuses it: the deployer's heal record does not name it (the deployer
// did not start it), and, even as the heal the deployer was about to
// start, its content is not the current record's. The reconcile pass
// itself, finding the fleet gone, refuses to heal from the overwritten
// release.json.
func TestForgedHealRefused(t *testing.T) {
	const evilData = "#!/bin/sh\n# mallory was here\n"
	for _, tc := range []struct {
		name string
		// recorded: the deployer's heal record names the forged heal (as
		// if Mallory raced a heal the deployer decided on).
		recorded bool
		want     string
	}{
		{name: "started by Mallory", want: "is not a heal the deployer's reconcile pass started"},
		{name: "racing the deployer's own heal", recorded: true, want: "the current record's release_sha256 is "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			r1 := h.baseRelease()
			r1.Reconcile = release.ReconcileHeal
			h.start(r1).succeed()
			h.clk.Advance(time.Hour)
			evil := h.overwriteRelease(r1, evilData)

			heal := evil.Clone()
			heal.ReleaseID, heal.CreatedAt, heal.CreatedBy, heal.Identity, heal.HealOf = h.baseRelease().ReleaseID, h.clk.Now().Add(-time.Minute), Reconciler, nil, r1.ReleaseID
			if tc.recorded {
				require.NoError(t, h.ledger.PutHeal(t.Context(), project, config, ledger.HealRecord{Of: r1.ReleaseID, InARow: 1, LastAt: h.clk.Now(), LastHeal: heal.ReleaseID}))
			}
			before := h.snapshot()
			err := h.start(heal).step(execution.TaskValidate)
			var bad *failure.BadReleaseError
			require.ErrorAs(t, err, &bad)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, before, h.snapshot(), "the fleet changed")
		})
	}
	t.Run("the reconcile pass heals from the recorded content only", func(t *testing.T) {
		h := newHarness(t)
		r1 := h.baseRelease()
		r1.Reconcile = release.ReconcileHeal
		h.start(r1).succeed()
		h.overwriteRelease(r1, evilData)
		h.deleteGroup(naming.GroupName(project, config, "web", r1.ReleaseID))
		h.pass()
		h.clk.Advance(tuning.HealAfter)
		p := h.pass()
		assert.Empty(t, p.Healed, "a heal of the overwritten release.json started")
		require.Len(t, p.Errors, 1)
		assert.Contains(t, p.Errors[0], "release "+r1.ReleaseID+" changed after the deployer accepted it")
	})
}

// TestReleaseHashRecordedOnce: Validate records the release's canonical
// hash under _state/ (naming.ReleaseHashKey); a reader of the release
// after it is overwritten gets an error naming the release and both
// hashes.
func TestReleaseHashRecordedOnce(t *testing.T) {
	h := newHarness(t)
	r1 := h.baseRelease()
	x := h.start(r1)
	require.NoError(t, x.step(execution.TaskValidate))
	require.NoError(t, x.step(execution.TaskValidate), "a retried Validate accepts its record")
	_, sum, err := h.ledger.VerifiedRelease(t.Context(), project, config, r1.ReleaseID)
	require.NoError(t, err)
	assert.Equal(t, x.state.ReleaseSHA256, sum)

	evil := h.overwriteRelease(r1, "#!/bin/sh\n")
	evilSum, err := release.Hash(evil)
	require.NoError(t, err)
	_, _, err = h.ledger.VerifiedRelease(t.Context(), project, config, r1.ReleaseID)
	var bad *failure.BadReleaseError
	require.ErrorAs(t, err, &bad)
	assert.Contains(t, err.Error(), "release "+r1.ReleaseID+" changed after the deployer accepted it: its recorded sha256 is "+sum+", release.json's is "+evilSum)

	err = h.ledger.RecordReleaseHash(t.Context(), project, config, ledger.ReleaseHash{ReleaseID: r1.ReleaseID, ReleaseSHA256: evilSum, Execution: "x"})
	require.ErrorAs(t, err, &bad, "the record is written once")
}

// proofOf verifies every proof as naming one caller.
type proofOf identity.Caller

func (c proofOf) Verify(context.Context, *release.Identity, string) (identity.Caller, error) {
	return identity.Caller(c), nil
}

// TestProofOfAnotherAccountRefused: a proof that verifies, but names a
// principal of an account the deployer does not accept proofs from
// (Config.IdentityAccounts, default its own), is refused at Validate;
// the account listed, it is accepted.
func TestProofOfAnotherAccountRefused(t *testing.T) {
	mallory := identity.Caller{ARN: "arn:aws:iam::999999999999:user/alice", Account: "999999999999", UserID: "AIDAMALLORY"}
	h := newHarness(t)
	h.d.cfg.Identities = proofOf(mallory)
	err := h.start(h.baseRelease()).step(execution.TaskValidate)
	var bad *failure.BadReleaseError
	require.ErrorAs(t, err, &bad)
	assert.Contains(t, err.Error(), "identity: the proof names arn:aws:iam::999999999999:user/alice of account 999999999999; the deployer accepts proofs from accounts "+account+" only")

	h.d.cfg.IdentityAccounts = []string{account, "999999999999"}
	require.NoError(t, h.start(h.baseRelease()).step(execution.TaskValidate))
}

// TestRecordsNameTheFullCaller: the run-once marker, the outcome and the
// current record name who asked by the full ARN and the unique id the
// proof named, never by a name the caller chose alone.
func TestRecordsNameTheFullCaller(t *testing.T) {
	h := newHarness(t)
	r := h.baseRelease()
	r.CreatedBy = "bob"
	h.start(r).succeed()
	run, _, err := h.locks.RunOf(t.Context(), project, config, r.ReleaseID)
	require.NoError(t, err)
	assert.Equal(t, [2]string{caller, callerID}, [2]string{run.CreatedBy, run.CreatedByID})
	o, _, err := h.ledger.GetOutcome(t.Context(), project, config, r.ReleaseID)
	require.NoError(t, err)
	assert.Equal(t, [3]string{caller, callerID, "bob"}, [3]string{o.CreatedBy, o.CreatedByID, o.CreatedByName})
	cur, _, err := h.ledger.GetCurrent(t.Context(), project, config)
	require.NoError(t, err)
	assert.Equal(t, [3]string{caller, callerID, "bob"}, [3]string{cur.CreatedBy, cur.CreatedByID, cur.CreatedByName})
}

// TestMovedProofRefused is the attack on the binding, through Validate
// with the real verifier and a simulated STS that checks signatures as
// AWS does (sim.ProofSTS): Mallory copies Alice's fresh proof of Alice's
// release into Mallory's own release, adding the binding header again in
// another case with the hash of Mallory's release. Go's map order is
// random, so it is tried 400 times: every one is refused, and nothing of
// Mallory's release runs as Alice's.
func TestMovedProofRefused(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.world.AddAccessKey(caller, callerID, "AKIDALICE", "alice-secret"))
	h.d.cfg.Identities = identity.Verifier{Client: h.world.ProofSTS()}
	alice := identity.Signer{Credentials: credentials.NewStaticCredentialsProvider("AKIDALICE", "alice-secret", ""), Region: region, Clock: h.clk}
	prove := func(r *release.Release) *release.Identity {
		sum, err := release.IdentityHash(r)
		require.NoError(t, err)
		proof, err := alice.Prove(t.Context(), sum)
		require.NoError(t, err)
		return proof
	}
	victim := h.baseRelease()
	victim.Identity = prove(victim)
	aliceProof := victim.Identity
	require.NoError(t, h.start(victim).step(execution.TaskValidate), "Alice's proof verifies for Alice's release")

	for i := range 400 {
		mallory := h.baseRelease()
		mallory.UserData = "#!/bin/sh\n# mallory was here\n"
		sum, err := release.IdentityHash(mallory)
		require.NoError(t, err)
		forged := &release.Identity{Method: aliceProof.Method, URL: aliceProof.URL, Headers: map[string]string{}}
		for k, v := range aliceProof.Headers {
			forged.Headers[strings.ToLower(k)] = v
		}
		forged.Headers[identity.BindingHeader] = sum
		mallory.Identity = forged
		err = h.start(mallory).step(execution.TaskValidate)
		var bad *failure.BadReleaseError
		require.ErrorAs(t, err, &bad, "attempt %d: Mallory's release verified as Alice's", i)
	}
}
