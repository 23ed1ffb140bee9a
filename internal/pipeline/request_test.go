package pipeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/release"
)

// validRequest is a request of the deploy-test release through the
// deploy-test pipeline, as JSON fields to change.
func validRequest(t *testing.T) map[string]any {
	t.Helper()
	pipe, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pipelines", "deploy-test.json"))
	require.NoError(t, err)
	rel, err := release.ReadFile(filepath.Join("..", "..", "testdata", "deploy-test-release.json"))
	require.NoError(t, err)
	rel.ConfigName = ""
	raw, err := release.Canonical(rel)
	require.NoError(t, err)
	return map[string]any{"promotion_id": "20260301T120000Z-p1", "created_at": time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		"pipeline": json.RawMessage(pipe), "release": json.RawMessage(raw)}
}

// TestDecodeRequest: a request is checked as the deployer checks it, and
// every refusal names what is wrong; its canonical form decodes to the
// same request, and the identity proof is not part of what it binds.
func TestDecodeRequest(t *testing.T) {
	encode := func(m map[string]any) []byte {
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return b
	}
	q, err := DecodeRequest(encode(validRequest(t)))
	require.NoError(t, err)
	assert.Equal(t, "development", q.FirstConfig())
	canonical, err := q.Canonical()
	require.NoError(t, err)
	again, err := DecodeRequest(canonical)
	require.NoError(t, err)
	h1, _ := q.Hash()
	h2, _ := again.Hash()
	assert.Equal(t, h1, h2, "the canonical form is stable")
	bound, _ := q.IdentityHash()
	q.Identity = &release.Identity{Method: "POST", URL: "https://sts.amazonaws.com/"}
	proved, _ := q.IdentityHash()
	assert.Equal(t, bound, proved, "the proof binds the request without itself")

	tests := []struct {
		name   string
		change func(m map[string]any)
		want   string
	}{
		{"unknown field", func(m map[string]any) { m["stages"] = 1 }, `unknown field "stages"`},
		{"bad promotion id", func(m map[string]any) { m["promotion_id"] = "../x" }, "request.promotion_id: release id"},
		{"no created_at", func(m map[string]any) { delete(m, "created_at") }, "request.created_at: required"},
		{"bad pipeline", func(m map[string]any) { m["pipeline"] = json.RawMessage(`{"project_name": "x"}`) }, "project_name"},
		{"bad release", func(m map[string]any) { m["release"] = json.RawMessage(`{"project_name": 1}`) }, "release."},
		{"another project's release", func(m map[string]any) {
			var r map[string]any
			require.NoError(t, json.Unmarshal(m["release"].(json.RawMessage), &r))
			r["project_name"] = "other/project"
			m["release"] = json.RawMessage(encode(r))
		}, `release.project_name: "other/project" is not the pipeline's project`},
		{"too large", func(m map[string]any) { m["created_by"] = strings.Repeat("x", MaxRequestBytes) }, "over the limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := validRequest(t)
			tt.change(m)
			_, err := DecodeRequest(encode(m))
			var invalid *InvalidError
			require.ErrorAs(t, err, &invalid)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestApprovalIdentityHash: an approval's proof binds its promotion, stage
// and artifact: changing any changes what it binds.
func TestApprovalIdentityHash(t *testing.T) {
	a := Approval{PromotionID: "p1", Stage: "production", Digest: "abc", CreatedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	base, err := a.IdentityHash()
	require.NoError(t, err)
	for _, change := range []func(*Approval){
		func(a *Approval) { a.PromotionID = "p2" }, func(a *Approval) { a.Stage = "staging" }, func(a *Approval) { a.Digest = "abd" },
	} {
		b := a
		change(&b)
		other, err := b.IdentityHash()
		require.NoError(t, err)
		assert.NotEqual(t, base, other)
	}
	a.Identity = &release.Identity{Method: "POST"}
	same, _ := a.IdentityHash()
	assert.Equal(t, base, same)
}
