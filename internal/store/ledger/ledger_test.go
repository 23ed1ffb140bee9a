package ledger_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
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
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/target"
)

const (
	bucket  = "ferry-deployer-123456789012-us-east-1"
	project = "coinbase/deploy-test"
	config  = "development"
)

var t0 = time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)

func releaseJSON(id string) []byte {
	return []byte(fmt.Sprintf(`{"project_name":%q,"config_name":%q,"release_id":%q,"created_at":"2030-05-06T07:08:09Z","subnets":["a"],"ami":"ubuntu","services":{"web":{"instance_type":"t2.nano"}}}`,
		project, config, id))
}

type env struct {
	client *s3.Client
	clk    *clock.Virtual
	ledger *ledger.Ledger
}

func newEnv(t *testing.T) env {
	t.Helper()
	clk := clock.NewVirtual(t0)
	srv := s3test.StartVersioned(t, clk, bucket)
	return env{client: srv.Client(), clk: clk, ledger: ledger.New(srv.Client(), bucket)}
}

func (e env) putRaw(t *testing.T, key string, body string) {
	t.Helper()
	s3test.Put(t, e.client, bucket, key, body)
}

func problems(t *testing.T, err error) []string {
	t.Helper()
	var bad *failure.BadReleaseError
	require.ErrorAs(t, err, &bad)
	return bad.Problems
}

func TestRelease(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	raw := releaseJSON("r1")

	_, err := e.ledger.GetRelease(ctx, project, config, "r1")
	assert.Equal(t, []string{"release r1 not found in the deployer bucket"}, problems(t, err))

	require.NoError(t, e.ledger.PutRelease(ctx, project, config, "r1", raw))
	require.NoError(t, e.ledger.PutRelease(ctx, project, config, "r1", raw), "the same bytes again")
	err = e.ledger.PutRelease(ctx, project, config, "r1", releaseJSON("other"))
	assert.Equal(t, []string{"release_id: release r1 is already stored with different content"}, problems(t, err))

	got, err := e.ledger.GetReleaseRaw(ctx, project, config, "r1")
	require.NoError(t, err)
	assert.Equal(t, raw, got, "stored exactly as uploaded")
	r, err := e.ledger.GetRelease(ctx, project, config, "r1")
	require.NoError(t, err)
	assert.Equal(t, "r1", r.ReleaseID)
	assert.Equal(t, project, r.ProjectName)
	assert.Equal(t, t0, r.CreatedAt.UTC())

	err = e.ledger.PutRelease(ctx, project, config, "big", make([]byte, limits.MaxReleaseBytes+1))
	assert.Contains(t, problems(t, err)[0], "over the limit of")
}

func TestGetReleaseGarbage(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{"not JSON", "garbage", ""},
		{"empty", "", ""},
		{"unknown field", `{"autoscalng":1}`, "autoscalng: unknown field"},
		{"huge", strings.Repeat(" ", limits.MaxReleaseBytes+1), "larger than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.putRaw(t, naming.ReleaseKey(project, config, "r1"), tc.body)
			_, err := e.ledger.GetRelease(t.Context(), project, config, "r1")
			ps := problems(t, err)
			require.NotEmpty(t, ps)
			assert.Contains(t, strings.Join(ps, "\n"), tc.want)
		})
	}
}

func TestUserData(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	data := []byte("#cloud-config\nruncmd: [echo hi]\n")

	_, err := e.ledger.GetUserData(ctx, project, config, "r1", "web")
	require.ErrorIs(t, err, ledger.ErrNotFound)

	require.NoError(t, e.ledger.PutUserData(ctx, project, config, "r1", "web", data))
	require.NoError(t, e.ledger.PutUserData(ctx, project, config, "r1", "web", data), "a retry rewrites")
	got, err := e.ledger.GetUserData(ctx, project, config, "r1", "web")
	require.NoError(t, err)
	assert.Equal(t, data, got)

	err = e.ledger.PutUserData(ctx, project, config, "r1", "web", make([]byte, limits.MaxUserDataBytes+1))
	assert.Contains(t, problems(t, err)[0], "services.web.user_data: rendered user data is")

	e.putRaw(t, naming.UserDataKey(project, config, "r1", "huge"), strings.Repeat("x", limits.MaxUserDataBytes+1))
	_, err = e.ledger.GetUserData(ctx, project, config, "r1", "huge")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "larger than")
}

func TestOutcomeAndCurrentRoundTrip(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()

	_, found, err := e.ledger.GetOutcome(ctx, project, config, "r1")
	require.NoError(t, err)
	assert.False(t, found)
	_, found, err = e.ledger.GetCurrent(ctx, project, config)
	require.NoError(t, err)
	assert.False(t, found)

	o := ledger.Outcome{
		ReleaseID: "r1", Execution: "arn:aws:states:us-east-1:123456789012:execution:ferry:r1",
		End: "FailureDirty", Error: failure.NameCleanUp, Cause: "clean up: boom",
		Leftovers: []string{"asg coinbase/deploy-test/development/web/r1"},
		StartedAt: t0, EndedAt: t0.Add(5 * time.Minute), CreatedBy: "alice",
	}
	require.NoError(t, e.ledger.PutOutcome(ctx, project, config, o))
	gotO, found, err := e.ledger.GetOutcome(ctx, project, config, "r1")
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, o, gotO)

	c := ledger.Current{
		ReleaseID: "r1", Execution: o.Execution, ReleaseSHA256: strings.Repeat("ab", 32), CreatedBy: "alice",
		DeployedAt: t0, UserDataSHA256: map[string]string{"web": strings.Repeat("cd", 32)}, Services: []string{"web"},
	}
	require.NoError(t, e.ledger.PutCurrent(ctx, project, config, c))
	gotC, found, err := e.ledger.GetCurrent(ctx, project, config)
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, c, gotC)

	// JSON field names are the contract with `ferry status` and people.
	out, err := e.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(naming.CurrentKey(project, config))})
	require.NoError(t, err)
	defer out.Body.Close()
	stored, err := io.ReadAll(out.Body)
	require.NoError(t, err)
	for _, field := range []string{`"release_id"`, `"execution"`, `"release_sha256"`, `"created_by"`, `"deployed_at"`, `"user_data_sha256"`, `"services"`} {
		assert.Contains(t, string(stored), field)
	}

	assert.Error(t, e.ledger.PutOutcome(ctx, project, config, ledger.Outcome{}), "an outcome needs a release id")
	assert.Error(t, e.ledger.PutCurrent(ctx, project, config, ledger.Current{}), "a current record needs a release id")
}

// TestIntents: Deploy's record of the groups it may create is replaced by
// a retry; CleanUpSuccess's record of the groups it retires is written
// once, and a second attempt gets the first attempt's groups back, so
// every attempt retires exactly the same groups. "Not found" is the only
// absence; garbage fails closed.
func TestIntents(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	_, found, err := e.ledger.GetDeploying(ctx, project, config, "r1")
	require.NoError(t, err)
	assert.False(t, found)
	_, found, err = e.ledger.GetDeleting(ctx, project, config, "r1")
	require.NoError(t, err)
	assert.False(t, found)

	deploying := ledger.Intent{ReleaseID: "r1", Execution: "x1", Since: t0, Groups: []string{"p/c/web/r1"}}
	require.NoError(t, e.ledger.PutDeploying(ctx, project, config, deploying))
	deploying.Groups = append(deploying.Groups, "p/c/worker/r1")
	require.NoError(t, e.ledger.PutDeploying(ctx, project, config, deploying))
	got, found, err := e.ledger.GetDeploying(ctx, project, config, "r1")
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, deploying, got)

	first := ledger.Intent{ReleaseID: "r1", Execution: "x1", Since: t0, Groups: []string{"p/c/web/r0"}}
	kept, wrote, err := e.ledger.CreateDeleting(ctx, project, config, first)
	require.NoError(t, err)
	assert.True(t, wrote)
	assert.Equal(t, first, kept)
	second := ledger.Intent{ReleaseID: "r1", Execution: "x1", Since: t0.Add(time.Minute), Groups: []string{"p/c/web/r0", "p/c/web/r9"}}
	kept, wrote, err = e.ledger.CreateDeleting(ctx, project, config, second)
	require.NoError(t, err)
	assert.False(t, wrote, "the first attempt's record stays")
	assert.Equal(t, first, kept)

	e.putRaw(t, naming.DeletingKey(project, config, "r2"), "garbage")
	_, found, err = e.ledger.GetDeleting(ctx, project, config, "r2")
	require.Error(t, err, "an unreadable record is not an absent one")
	assert.False(t, found)
	_, _, err = e.ledger.CreateDeleting(ctx, project, config, ledger.Intent{ReleaseID: "r2"})
	require.Error(t, err)

	assert.Error(t, e.ledger.PutDeploying(ctx, project, config, ledger.Intent{}))
	_, _, err = e.ledger.CreateDeleting(ctx, project, config, ledger.Intent{})
	assert.Error(t, err)
}

// TestTargets: the targets record is absent until written, read back as
// written, replaced by the next write; one that cannot be read is an error, not
// an absent record (fail closed: it may name an environment where
// groups run); a deleting record names groups per environment.
func TestTargets(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	_, found, err := e.ledger.GetTargets(ctx, project, config)
	require.NoError(t, err)
	assert.False(t, found)

	east := target.Target{AccountID: "123456789012", Region: "us-east-1"}
	west := target.Target{AccountID: "123456789012", Region: "us-west-2", Qualifier: "blue"}
	both := ledger.Targets{Targets: []target.Target{east, west}, ReleaseID: "r2", UpdatedAt: t0}
	require.NoError(t, e.ledger.PutTargets(ctx, project, config, ledger.Targets{Targets: []target.Target{east}, ReleaseID: "r1", UpdatedAt: t0}))
	require.NoError(t, e.ledger.PutTargets(ctx, project, config, both))
	got, found, err := e.ledger.GetTargets(ctx, project, config)
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, both, got)
	deleting := ledger.Intent{ReleaseID: "r2", Execution: "x2", Since: t0, Groups: []string{},
		Elsewhere: []ledger.ElsewhereGroups{{Target: east, Groups: []string{"p/c/web/r1"}, Attached: []ledger.StandbyGroup{{Name: "p/c/web/r1", LoadBalancers: []string{"elb"}, Desired: 2}}}}}
	kept, wrote, err := e.ledger.CreateDeleting(ctx, project, config, deleting)
	require.NoError(t, err)
	assert.True(t, wrote)
	assert.Equal(t, deleting, kept)
	read, _, err := e.ledger.GetDeleting(ctx, project, config, "r2")
	require.NoError(t, err)
	assert.Equal(t, deleting.Elsewhere, read.Elsewhere)

	e.putRaw(t, naming.TargetsKey(project, config), "garbage")
	_, found, err = e.ledger.GetTargets(ctx, project, config)
	require.Error(t, err)
	assert.False(t, found)
}

func TestRecordGarbage(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"not JSON", "<xml/>", "not JSON"},
		{"empty", "", "empty object"},
		{"wrong type", `{"release_id":1}`, "not JSON"},
		{"trailing data", `{"release_id":"r1"} x`, "data after the object"},
		{"huge", `{"release_id":"` + strings.Repeat("x", limits.MaxStateObjectBytes) + `"}`, "larger than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ctx := t.Context()
			e.putRaw(t, naming.OutcomeKey(project, config, "r1"), tc.body)
			e.putRaw(t, naming.CurrentKey(project, config), tc.body)

			_, found, err := e.ledger.GetOutcome(ctx, project, config, "r1")
			require.Error(t, err)
			assert.False(t, found)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), naming.OutcomeKey(project, config, "r1"))

			_, found, err = e.ledger.GetCurrent(ctx, project, config)
			require.Error(t, err)
			assert.False(t, found)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestListing(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()

	configs, err := e.ledger.Configs(ctx, project)
	require.NoError(t, err)
	assert.Empty(t, configs)
	ids, err := e.ledger.Releases(ctx, project, config)
	require.NoError(t, err)
	assert.Empty(t, ids)

	// More releases than one listing page holds (1000 keys), each with a
	// few objects beside it, in three configs, and another project.
	const n = 700
	for i := range n {
		e.clk.Advance(time.Second)
		id := fmt.Sprintf("r%04d", i)
		require.NoError(t, e.ledger.PutRelease(ctx, project, config, id, releaseJSON(id)))
		require.NoError(t, e.ledger.PutUserData(ctx, project, config, id, "web", []byte("x")))
	}
	// Two releases written in the same second: ties by id, descending.
	require.NoError(t, e.ledger.PutRelease(ctx, project, config, "tie-a", releaseJSON("tie-a")))
	require.NoError(t, e.ledger.PutRelease(ctx, project, config, "tie-b", releaseJSON("tie-b")))
	e.putRaw(t, naming.AssetKey(project, config, strings.Repeat("ef", 32)), "asset")
	e.putRaw(t, naming.LockKey(project, config), `{"release_id":"r0001"}`)
	e.putRaw(t, naming.HaltKey(project, "staging"), `{}`)
	e.putRaw(t, naming.CurrentKey(project, "production"), `{}`)
	e.putRaw(t, naming.CurrentKey("coinbase/other", "qa"), `{}`)

	configs, err = e.ledger.Configs(ctx, project)
	require.NoError(t, err)
	assert.Equal(t, []string{"development", "production", "staging"}, configs)

	ids, err = e.ledger.Releases(ctx, project, config)
	require.NoError(t, err)
	require.Len(t, ids, n+2)
	assert.Equal(t, []string{"tie-b", "tie-a", "r0699", "r0698"}, ids[:4])
	assert.Equal(t, "r0000", ids[len(ids)-1])

	ids, err = e.ledger.Releases(ctx, project, "staging")
	require.NoError(t, err)
	assert.Empty(t, ids)
}

func TestFailures(t *testing.T) {
	tests := []struct {
		name          string
		status        int
		code          string
		wantRetryable bool
	}{
		{"throttled", http.StatusServiceUnavailable, "SlowDown", true},
		{"access denied", http.StatusForbidden, "AccessDenied", false},
		{"missing bucket", http.StatusNotFound, "NoSuchBucket", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := ledger.New(s3test.Failing(t, tc.status, tc.code), bucket)
			ctx := t.Context()

			_, err := l.GetRelease(ctx, project, config, "r1")
			_, _, errD := l.GetDeploying(ctx, project, config, "r1")
			_, _, errX := l.GetDeleting(ctx, project, config, "r1")
			_, _, errW := l.CreateDeleting(ctx, project, config, ledger.Intent{ReleaseID: "r1"})
			_, _, errO := l.GetOutcome(ctx, project, config, "r1")
			_, _, errC := l.GetCurrent(ctx, project, config)
			_, errU := l.GetUserData(ctx, project, config, "r1", "web")
			_, errL := l.Configs(ctx, project)
			_, errR := l.Releases(ctx, project, config)
			_, errP := l.ProjectConfigs(ctx)
			_, errF := l.FindRelease(ctx, "r1")
			for i, err := range []error{
				err, errD, errX, errW, errO, errC, errU, errL, errR, errP, errF,
				l.PutRelease(ctx, project, config, "r1", releaseJSON("r1")),
				l.PutCurrent(ctx, project, config, ledger.Current{ReleaseID: "r1"}),
			} {
				require.Error(t, err, "call %d", i)
				assert.False(t, errors.Is(err, ledger.ErrNotFound), "call %d: a failed read is not \"not found\"", i)
				var bad *failure.BadReleaseError
				assert.False(t, errors.As(err, &bad), "call %d: a failed read is not a bad release: %v", i, err)
				assert.Equal(t, tc.wantRetryable, failure.IsRetryable(err), "call %d: %v", i, err)
			}
		})
	}
}

// TestReleaseObjectsExpire: the objects of one release (release.json,
// rendered user data, outcome) are written with the tag the deployer
// bucket's lifecycle rule expires; what must stay (the current record) is
// not.
func TestReleaseObjectsExpire(t *testing.T) {
	e := newEnv(t)
	rec := s3test.NewTaggingRecorder(e.client)
	l := ledger.New(rec, bucket)
	ctx := t.Context()
	const id = "r-1"
	require.NoError(t, l.PutRelease(ctx, project, config, id, releaseJSON(id)))
	require.NoError(t, l.PutRelease(ctx, project, config, id, releaseJSON(id)), "storing the same bytes again")
	require.NoError(t, l.PutUserData(ctx, project, config, id, "web", []byte("#!/bin/sh\n")))
	require.NoError(t, l.PutOutcome(ctx, project, config, ledger.Outcome{ReleaseID: id, End: "Success"}))
	require.NoError(t, l.PutCurrent(ctx, project, config, ledger.Current{ReleaseID: id}))
	require.NoError(t, l.PutTargets(ctx, project, config, ledger.Targets{ReleaseID: id}))
	require.NoError(t, l.PutDeploying(ctx, project, config, ledger.Intent{ReleaseID: id}))
	_, _, err := l.CreateDeleting(ctx, project, config, ledger.Intent{ReleaseID: id})
	require.NoError(t, err)

	const expire = naming.ObjectTagExpire + "=" + naming.ObjectTagExpireRelease
	assert.Equal(t, map[string]string{
		naming.ReleaseKey(project, config, id):         expire,
		naming.UserDataKey(project, config, id, "web"): expire,
		naming.OutcomeKey(project, config, id):         expire,
		naming.DeployingKey(project, config, id):       expire,
		naming.DeletingKey(project, config, id):        expire,
		naming.CurrentKey(project, config):             "",
		naming.TargetsKey(project, config):             "", // kept while groups may be there
	}, rec.Tagging)
}

// TestProjectConfigs: every project-config with a deployer record is
// listed, sorted; one only a client wrote to is not, nor the start
// markers beside the project-configs' records.
func TestProjectConfigs(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	got, err := e.ledger.ProjectConfigs(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "an empty bucket")

	require.NoError(t, e.ledger.PutCurrent(ctx, "coinbase/shop", "production", ledger.Current{ReleaseID: "r1"}))
	require.NoError(t, e.ledger.PutCurrent(ctx, "coinbase/shop", "development", ledger.Current{ReleaseID: "r1"}))
	require.NoError(t, e.ledger.PutOutcome(ctx, "acme/web", "staging", ledger.Outcome{ReleaseID: "r2", End: "FailureClean"}))
	_, err = e.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket),
		Key: aws.String(naming.ReleaseKey("other/never-run", "dev", "r3")), Body: strings.NewReader("{}")})
	require.NoError(t, err)
	_, err = e.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket),
		Key: aws.String(naming.StartKey("111111111111", "us-east-1", "20300101T000000.000Z", "r4")), Body: strings.NewReader("")})
	require.NoError(t, err)

	got, err = e.ledger.ProjectConfigs(ctx)
	require.NoError(t, err)
	assert.Equal(t, []ledger.ProjectConfig{
		{Project: "acme/web", Config: "staging"},
		{Project: "coinbase/shop", Config: "development"},
		{Project: "coinbase/shop", Config: "production"},
	}, got)
}

// TestKnown: a project-config is known once any object of it is stored
// (an uploaded release here), and a neighbour whose name only starts the
// same is not; a failed listing is an error, never "unknown".
func TestKnown(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	known, err := e.ledger.Known(ctx, "coinbase/shop", "dev")
	require.NoError(t, err)
	assert.False(t, known, "an empty bucket")

	require.NoError(t, e.ledger.PutRelease(ctx, "coinbase/shop", "development", "r1", []byte("{}")))
	for _, tc := range []struct {
		project, config string
		want            bool
	}{
		{"coinbase/shop", "development", true},
		{"coinbase/shop", "dev", false},
		{"coinbase/sho", "development", false},
		{"coinbase/shop", "production", false},
	} {
		known, err := e.ledger.Known(ctx, tc.project, tc.config)
		require.NoError(t, err)
		assert.Equal(t, tc.want, known, "%s %s", tc.project, tc.config)
	}

	_, err = ledger.New(e.client, "no-such-bucket").Known(ctx, "coinbase/shop", "development")
	require.Error(t, err)
}

// TestFindRelease: a release id is found in the configs that hold its
// release object, and only there: a release id that only starts another
// is not it (a failed listing is an error: TestFailures).
func TestFindRelease(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	require.NoError(t, e.ledger.PutRelease(ctx, project, config, "r1", releaseJSON("r1")))
	require.NoError(t, e.ledger.PutOutcome(ctx, project, config, ledger.Outcome{ReleaseID: "r1", End: "Success"}))
	require.NoError(t, e.ledger.PutOutcome(ctx, "acme/web", "staging", ledger.Outcome{ReleaseID: "r10", End: "Success"}))

	got, err := e.ledger.FindRelease(ctx, "r1")
	require.NoError(t, err)
	assert.Equal(t, []ledger.ProjectConfig{{Project: project, Config: config}}, got)
	got, err = e.ledger.FindRelease(ctx, "r10")
	require.NoError(t, err)
	assert.Empty(t, got, "an outcome without its release object is no release")
	got, err = e.ledger.FindRelease(ctx, "r")
	require.NoError(t, err)
	assert.Empty(t, got, "a prefix of an id is not the id")
}
