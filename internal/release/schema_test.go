package release

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The schema editors and `ferry schema` show is the committed one: a
// change to it is a reviewed change of testdata/schema.json (go test
// -update rewrites it).
func TestSchemaIsUpToDate(t *testing.T) {
	golden := filepath.Join("testdata", "schema.json")
	if *update {
		require.NoError(t, os.WriteFile(golden, Schema(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(Schema()), "the release schema changed: run go test ./internal/release -run TestSchemaIsUpToDate -update and review the diff")
}
