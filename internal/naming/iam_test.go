package naming

import (
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

// TestPassable: roles at the root path are never passable; every role
// under a path is.
func TestPassable(t *testing.T) {
	assert.False(t, Passable("/", "asg_lifecycle_hooks"))
	assert.True(t, Passable("/acme/shop/production/", "hooks"))
	assert.True(t, Passable(InstanceProfilePath("acme/shop", "production", "web"), "web"))
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
