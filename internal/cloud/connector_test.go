package cloud_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/target"
)

var start = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// release is the Session of the tests' connects.
var release = cloud.Session{Project: "coinbase/deploy-test", Config: "development", ReleaseID: "r1"}

func newWorld(t *testing.T) (*clock.Virtual, *sim.World) {
	t.Helper()
	spec, err := sim.Load(filepath.Join("..", "..", "testdata", "worlds", "deploy-test.json"))
	require.NoError(t, err)
	clk := clock.NewVirtual(start)
	w, err := sim.New(clk, spec)
	require.NoError(t, err)
	return clk, w
}

// The deploy role's credentials are assumed once and reused by every
// Connect and every call until ExpiryWindow before they expire; then the
// next use assumes the role again.
func TestConnectorCachesCredentials(t *testing.T) {
	clk, w := newWorld(t)
	conn := w.Connector("111111111111", nil, cloud.ConnectorOptions{})
	ctx := t.Context()
	own := target.Target{AccountID: "111111111111", Region: "us-east-1"}

	steps := []struct {
		name        string
		advance     time.Duration
		wantAssumes int
	}{
		{"first connect assumes the deploy role", 0, 1},
		{"later connects reuse it", 10 * time.Minute, 1},
		{"just before the expiry window", 44*time.Minute + 59*time.Second, 1},
		{"inside the 5 minute window: refreshed", 2 * time.Second, 2},
		{"the refreshed credentials are reused", 30 * time.Minute, 2},
	}
	var first *cloud.Clients
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			clk.Advance(s.advance)
			for range 5 {
				c, err := conn.Connect(ctx, own, release)
				require.NoError(t, err)
				if first == nil {
					first = c
				}
				assert.Same(t, first, c, "clients are built once per target")
				_, err = c.EC2.DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{"ami-0000000000000ab01"}})
				require.NoError(t, err)
			}
			assert.Equal(t, s.wantAssumes, w.Calls()["AssumeRole"])
		})
	}
	// Another target has its own role and its own cache.
	_, err := conn.Connect(ctx, target.Target{AccountID: "222222222222", Region: "us-east-1"}, release)
	require.NoError(t, err)
	assert.Equal(t, 3, w.Calls()["AssumeRole"])
	assert.Equal(t, 3, w.CallsByAccount()["111111111111"]["AssumeRole"], "AssumeRole is counted against the caller")
	// Another release of the same target has its own session.
	other := release
	other.ReleaseID = "r2"
	c, err := conn.Connect(ctx, own, other)
	require.NoError(t, err)
	assert.NotSame(t, first, c)
	assert.Equal(t, 4, w.Calls()["AssumeRole"])
}

// Each release's sessions carry its project and config as session tags and
// are named after it (naming.RoleSessionName), so the target's policies
// scope them and CloudTrail names the release.
func TestConnectorTagsSessionsPerRelease(t *testing.T) {
	_, w := newWorld(t)
	conn := w.Connector("111111111111", nil, cloud.ConnectorOptions{})
	ctx := t.Context()
	own := target.Target{AccountID: "111111111111", Region: "us-east-1"}
	c, err := conn.Connect(ctx, own, release)
	require.NoError(t, err)
	_, err = c.EC2.DescribeImages(ctx, &ec2.DescribeImagesInput{})
	require.NoError(t, err)
	log := w.CallLog()
	require.Len(t, log, 2)
	assert.Equal(t, "AssumeRole", log[0].Op)
	assert.Equal(t, naming.RoleARN("111111111111", naming.DeployerRoleName(sim.CallerRegion)), log[0].Principal)
	assert.Equal(t, map[string]string{"ProjectName": "coinbase/deploy-test", "ConfigName": "development"}, log[0].Auth[0].RequestTags)
	assert.Equal(t, "arn:aws:sts::111111111111:assumed-role/"+naming.DeployRoleName("111111111111", "us-east-1", "")+"/coinbase+deploy-test@development@r1", log[1].Principal)
	assert.Equal(t, map[string]string{"ProjectName": "coinbase/deploy-test", "ConfigName": "development"}, log[1].SessionTags)

	for _, bad := range []cloud.Session{{}, {Project: "coinbase/deploy-test", Config: "development"}, {Project: "a\nb", Config: "c", ReleaseID: "r"}} {
		_, err := conn.Connect(ctx, own, bad)
		assert.ErrorContains(t, err, "session:", "%+v", bad)
	}
}

// A Connector keeps at most MaxConnections, dropping the least recently
// used: a dropped one is connected again (a new AssumeRole) when used.
func TestConnectorBoundsItsCache(t *testing.T) {
	_, w := newWorld(t)
	conn := w.Connector("111111111111", nil, cloud.ConnectorOptions{MaxConnections: 2})
	ctx := t.Context()
	own := target.Target{AccountID: "111111111111", Region: "us-east-1"}
	rel := func(id string) cloud.Session { s := release; s.ReleaseID = id; return s }
	for _, id := range []string{"r1", "r2", "r1", "r3", "r1", "r2"} {
		_, err := conn.Connect(ctx, own, rel(id))
		require.NoError(t, err)
	}
	// r1, r2 | r1 reused | r3 drops r2 | r1 reused | r2 again drops r3.
	assert.Equal(t, 4, w.Calls()["AssumeRole"])
}

// A target whose role is missing, or does not trust the deployer, fails at
// Connect with a RoleError naming the role ARN and the account; nothing is
// cached, so fixing the account makes the next Connect work.
func TestConnectorRoleErrors(t *testing.T) {
	_, w := newWorld(t)
	conn := w.Connector("111111111111", nil, cloud.ConnectorOptions{})
	tests := []struct {
		name    string
		target  target.Target
		wantErr string
	}{
		{"account not in the world", target.Target{AccountID: "444444444444", Region: "us-east-1"}, ""},
		{"region not bootstrapped", target.Target{AccountID: "222222222222", Region: "ap-south-1"}, ""},
		{"qualifier not bootstrapped", target.Target{AccountID: "111111111111", Region: "us-east-1", Qualifier: "blue"}, ""},
		{"role does not trust the deployer", target.Target{AccountID: "333333333333", Region: "us-east-1"}, ""},
		{"not an account id", target.Target{AccountID: "12", Region: "us-east-1"}, "12-digit"},
		{"not a region", target.Target{AccountID: "222222222222", Region: "mars"}, "region"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := conn.Connect(t.Context(), tt.target, release)
			require.Error(t, err)
			if tt.wantErr != "" {
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			var roleErr *cloud.RoleError
			require.True(t, errors.As(err, &roleErr), "%v", err)
			arn := naming.RoleARN(tt.target.AccountID, naming.DeployRoleName(tt.target.AccountID, tt.target.Region, tt.target.Qualifier))
			assert.Equal(t, arn, roleErr.RoleARN)
			assert.Equal(t, tt.target.AccountID, roleErr.Account)
			assert.Contains(t, err.Error(), arn)
			assert.Contains(t, err.Error(), "account "+tt.target.AccountID)
			assert.Equal(t, cloud.CodeAccessDenied, cloud.ErrorCode(err))
			assert.NotContains(t, err.Error(), "sim-secret")
		})
	}
}

// Credentials are checked by the simulated services: the clients of one
// target cannot act with another account's session, and unknown keys are
// refused.
func TestBuildRefusesForeignCredentials(t *testing.T) {
	_, w := newWorld(t)
	ctx := t.Context()
	out, err := w.STS("111111111111").AssumeRole(ctx, stsInput{}.forRole("222222222222", "us-east-1"))
	require.NoError(t, err)
	creds := aws.NewCredentialsCache(staticCreds(*out.Credentials.AccessKeyId))
	build := w.Build(nil)
	tests := []struct {
		name    string
		target  target.Target
		creds   aws.CredentialsProvider
		errCode string
	}{
		{"own account", target.Target{AccountID: "222222222222", Region: "us-east-1"}, creds, ""},
		{"another account", target.Target{AccountID: "111111111111", Region: "us-east-1"}, creds, cloud.CodeAccessDenied},
		{"unknown key", target.Target{AccountID: "222222222222", Region: "us-east-1"}, staticCreds("AKIAFORGED"), cloud.CodeInvalidClientTokenID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := build(tt.target, tt.creds, tt.creds)
			_, err := c.EC2.DescribeImages(ctx, &ec2.DescribeImagesInput{})
			if tt.errCode == "" {
				require.NoError(t, err)
				return
			}
			assert.Equal(t, tt.errCode, cloud.ErrorCode(err))
		})
	}
}

// TestAssumeRoleSourceIdentity: STS takes a source identity of
// [\w+=,.@-]{2,64} not starting with "aws:" (AssumeRole, STS API
// Reference), only from a principal the role's trust policy allows
// sts:SetSourceIdentity ("Monitor and control actions taken with assumed
// roles", IAM User Guide): the bootstrap roles' trust does, another
// role's does not. The session keeps it for every call it makes.
func TestAssumeRoleSourceIdentity(t *testing.T) {
	ctx := t.Context()
	// ops trusts the deployer's account, without sts:SetSourceIdentity.
	other := naming.RoleARN("111111111111", "ops")
	tests := []struct {
		name, role, source, errCode string
	}{
		{"bootstrap role", "", "alice@111111111111", ""},
		{"pattern", "", "alice/x", "ValidationError"},
		{"too short", "", "a", "ValidationError"},
		{"reserved prefix", "", "aws:alice", "ValidationError"},
		{"another role, without one", other, "", ""},
		{"another role, whose trust does not allow one", other, "alice@111111111111", cloud.CodeAccessDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := sim.Load(filepath.Join("..", "..", "testdata", "worlds", "deploy-test.json"))
			require.NoError(t, err)
			spec.Accounts[0].Roles = append(spec.Accounts[0].Roles, sim.RoleSpec{Name: "ops", Trust: []string{"111111111111"}})
			w, err := sim.New(clock.NewVirtual(start), spec)
			require.NoError(t, err)
			in := stsInput{}.forRole("111111111111", "us-east-1")
			if tt.role != "" {
				in.RoleArn, in.Tags = aws.String(tt.role), nil
			}
			if tt.source != "" {
				in.SourceIdentity = aws.String(tt.source)
			}
			out, err := w.STS("111111111111").AssumeRole(ctx, in)
			if tt.errCode != "" {
				assert.Equal(t, tt.errCode, cloud.ErrorCode(err), "%v", err)
				return
			}
			require.NoError(t, err)
			c := w.Build(nil)(target.Target{AccountID: "111111111111", Region: "us-east-1"},
				aws.NewCredentialsCache(staticCreds(*out.Credentials.AccessKeyId)), nil)
			_, err = c.EC2.DescribeImages(ctx, &ec2.DescribeImagesInput{})
			require.NoError(t, err)
			log := w.CallLog()
			assert.Equal(t, tt.source, log[0].SourceIdentity)
			assert.Equal(t, tt.source, log[len(log)-1].SourceIdentity)
		})
	}
}
