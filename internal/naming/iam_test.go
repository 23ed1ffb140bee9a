package naming

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestWildcardMatch follows IAM's documented wildcard semantics for ARNs:
// "*" matches any combination of characters and "?" any single character,
// across "/" too (IAM JSON policy elements: Resource).
func TestWildcardMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"role/*/*", "role/acme/shop/web", true},
		{"role/*/*", "role/a/b", true},
		{"role/*/*", "role/root-role", false},
		{"role/*/*", "role//x", true},
		{"*", "", true},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"a*b*c", "a-b-b-c", true},
		{"a*b*c", "a-c-b", false},
		{"abc", "ABC", false},
		{"", "", true},
		{"", "x", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, WildcardMatch(tt.pattern, tt.s), "%q ~ %q", tt.pattern, tt.s)
	}
}

// TestPassable: a deploy role session may pass only roles under its own
// project-config's path: never a role at the root path, nor one of another
// project or config.
func TestPassable(t *testing.T) {
	assert.Equal(t, "role/${aws:PrincipalTag/ProjectName}/${aws:PrincipalTag/ConfigName}/*", PassRoleResource)
	assert.False(t, Passable("acme/shop", "production", "/", "asg_lifecycle_hooks"))
	assert.True(t, Passable("acme/shop", "production", "/acme/shop/production/", "hooks"))
	assert.True(t, Passable("acme/shop", "production", InstanceProfilePath("acme/shop", "production", "web"), "web"))
	assert.False(t, Passable("acme/shop", "production", "/acme/shop/staging/", "hooks"), "another config")
	assert.False(t, Passable("acme/shop", "production", "/acme/shop-two/production/", "hooks"), "another project sharing a prefix")
	assert.False(t, Passable("acme/shop", "production", "/acme/other/production/web/", "web"), "another project")
}

func TestDeployerRoleName(t *testing.T) {
	assert.Equal(t, "ferry-deployer-us-east-1", DeployerRoleName("us-east-1"))
	assert.Equal(t, "ferry-deployer-*", DeployerRoleNamePattern)
	assert.LessOrEqual(t, len(DeployerRoleName("ap-southeast-5")), 64)
	assert.True(t, WildcardMatch(DeployerRoleNamePattern, DeployerRoleName("eu-west-3")))
}

// TestRoleSessionName: STS's pattern and length always hold, names are
// injective on valid release coordinates, and long names are cut with a
// hash.
func TestRoleSessionName(t *testing.T) {
	valid := regexp.MustCompile(`^[\w+=,.@-]{2,64}$`)
	assert.Equal(t, "coinbase+deploy-test@development@r1", RoleSessionName("coinbase/deploy-test", "development", "r1"))
	cases := [][3]string{
		{"a/b", "c", "d"}, {"a/b.c", "d", "e"}, {"a.b/c", "d", "e"}, {"a_b/c", "d", "e"},
		{"a/b", "c-d", "e"}, {"a/b-c", "d", "e"}, {"a/b", "c", "d-e"},
		{"org/" + strings.Repeat("p", 60), "production", "20260301T120000Z-a55e75"},
		{"org/" + strings.Repeat("p", 60), "production", "20260301T120000Z-a55e76"},
		{"org/" + strings.Repeat("p", 61), "production", "20260301T120000Z-a55e75"},
	}
	seen := map[string][3]string{}
	for _, c := range cases {
		n := RoleSessionName(c[0], c[1], c[2])
		assert.Regexp(t, valid, n, "%v", c)
		assert.Equal(t, n, RoleSessionName(c[0], c[1], c[2]), "deterministic")
		if prev, dup := seen[n]; dup {
			t.Errorf("%v and %v share the session name %s", prev, c, n)
		}
		seen[n] = c
	}
	long := RoleSessionName("org/"+strings.Repeat("p", 60), "production", "r1")
	assert.Len(t, long, MaxRoleSessionNameLen)
	assert.Equal(t, 1, strings.Count(long, "="))
}

func TestStateMachineRoleName(t *testing.T) {
	assert.Equal(t, "ferry-statemachine-eu-west-1", StateMachineRoleName("eu-west-1"))
	assert.False(t, WildcardMatch(DeployerRoleNamePattern, StateMachineRoleName("eu-west-1")), "the bootstrap roles do not trust the state machine")
}

func TestProjectListed(t *testing.T) {
	tests := []struct {
		value, project string
		want           bool
	}{
		{"coinbase/deploy-test", "coinbase/deploy-test", true},
		{"acme/x coinbase/deploy-test", "coinbase/deploy-test", true},
		{"coinbase/", "coinbase/deploy-test", true},
		{"  coinbase/  ", "coinbase/deploy-test", true},
		{"coinbase", "coinbase/deploy-test", false},
		{"coinbase/deploy", "coinbase/deploy-test", false},
		{"coin/", "coinbase/deploy-test", false},
		{"coinbase/deploy-test-2", "coinbase/deploy-test", false},
		{"", "coinbase/deploy-test", false},
		{"/", "coinbase/deploy-test", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ProjectListed(tt.value, tt.project), "%q lists %q", tt.value, tt.project)
	}
}

// TestSourceIdentity: the source identity names the verified caller by
// the unique id IAM gave it, so principals of the same name are told
// apart, within what STS allows (AssumeRole, STS API Reference:
// SourceIdentity, [\w+=,.@-]{2,64}, not starting with "aws:").
func TestSourceIdentity(t *testing.T) {
	long := strings.Repeat("a", 70)
	tests := []struct{ arn, id, want string }{
		{"arn:aws:iam::111111111111:user/alice", "AIDAEXAMPLEALICE", "AIDAEXAMPLEALICE@111111111111"},
		{"arn:aws:sts::111111111111:assumed-role/AnyRole/alice", "AROAEXAMPLEANYROLE:alice", "AROAEXAMPLEANYROLE_alice@111111111111"},
		{"arn:aws:sts::111111111111:federated-user/alice", "111111111111:alice", "111111111111_alice@111111111111"},
		{"arn:aws:sts::111111111111:assumed-role/Admin/bob@example.com", "AROAEXAMPLEADMIN:bob@example.com", "AROAEXAMPLEADMIN_bob@example.com@111111111111"},
		{"arn:aws:iam::111111111111:root", "111111111111", "111111111111@111111111111"},
		{"arn:aws:sts::111111111111:assumed-role/Admin/" + long, "AROAEXAMPLEADMIN:" + long, "AROAEXAMPLEADMIN_" + strings.Repeat("a", 25) + "=dc23aeaf@111111111111"},
		{"arn:aws:iam::111111111111:user/alice", "", "user_alice@111111111111"},
		{"arn:aws:sts::111111111111:assumed-role/AnyRole/alice", "", "assumed-role_AnyRole_alice@111111111111"},
		{"arn:aws:iam::111111111111:user/al ice", "", "user_al_ice@111111111111"},
		{"arn:aws:iam::11111:user/alice", "AIDA", ""},
		{"alice", "AIDA", ""},
		{"", "", ""},
	}
	valid := regexp.MustCompile(`^[\w+=,.@-]{2,64}$`)
	seen := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.arn+" "+tt.id, func(t *testing.T) {
			got := SourceIdentity(tt.arn, tt.id)
			assert.Equal(t, tt.want, got)
			if got != "" {
				assert.Regexp(t, valid, got)
				assert.False(t, strings.HasPrefix(got, "aws:"))
				assert.True(t, WildcardMatch(SourceIdentityPattern, got))
				assert.NotContains(t, seen, got, "two callers named alike")
				seen[got] = tt.arn
			}
		})
	}
}
