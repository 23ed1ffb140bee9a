package release

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema()))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource(SchemaID, doc))
	s, err := c.Compile(SchemaID)
	require.NoError(t, err)
	return s
}

func schemaValidate(t *testing.T, s *jsonschema.Schema, data []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(t, err)
	return s.Validate(inst)
}

// TestValidReleases: every release in testdata agrees with both the schema
// and the validator.
func TestValidReleases(t *testing.T) {
	schema := compileSchema(t)
	files, err := filepath.Glob(filepath.Join(repoTestdata, "*.json"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 2)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			r, err := ReadFile(file)
			require.NoError(t, err)
			require.NoError(t, r.Validate(false))
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			assert.NoError(t, schemaValidate(t, schema, data))
			// The release as ferry runs it still matches the schema.
			canon, err := Canonical(r)
			require.NoError(t, err)
			assert.NoError(t, schemaValidate(t, schema, canon))
		})
	}
}

// TestInvalidCorpus: every release in testdata/invalid produces exactly the
// problems of its .problems file (refreshed with -update), and is rejected
// by the validator.
func TestInvalidCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoTestdata, "invalid", "*.json"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 25)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			r, err := ReadFile(file)
			require.Error(t, err)
			assert.Nil(t, r)
			got := problemsOf(t, err)
			require.NotEmpty(t, got)
			golden := file + ".problems"
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(strings.Join(got, "\n")+"\n"), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "missing %s (run go test -update)", golden)
			assert.Equal(t, strings.TrimSuffix(string(want), "\n"), strings.Join(got, "\n"))
		})
	}
}

// TestSchemaRefusesWhatDecodeRefuses: unknown fields and client-set fields
// are refused by the schema too, so an editor flags them.
func TestSchemaRefusesWhatDecodeRefuses(t *testing.T) {
	schema := compileSchema(t)
	cases := map[string]string{
		"unknown field":          strings.Replace(minimalFile, `"instance_type"`, `"autoscalng":{},"instance_type"`, 1),
		"release_id":             strings.Replace(minimalFile, `{`, `{"release_id":"r1",`, 1),
		"asset sha256":           strings.Replace(minimalFile, `{`, `{"assets":{"a":{"path":"a","sha256":"x"}},`, 1),
		"bad project":            strings.Replace(minimalFile, `coinbase/deploy-test`, `coinbase/../x`, 1),
		"spread 1":               strings.Replace(minimalFile, `"instance_type"`, `"autoscaling":{"spread":1},"instance_type"`, 1),
		"reserved tag":           strings.Replace(minimalFile, `"instance_type"`, `"tags":{"name":"x"},"instance_type"`, 1),
		"aws tag":                strings.Replace(minimalFile, `"instance_type"`, `"tags":{"aws:x":"x"},"instance_type"`, 1),
		"no services":            strings.Replace(minimalFile, `{"web":{"instance_type":"t2.nano","security_groups":["sg-web"]}}`, `{}`, 1),
		"null ami":               strings.Replace(minimalFile, `"ubuntu"`, `null`, 1),
		"asset path dot dot":     strings.Replace(minimalFile, `{`, `{"assets":{"a":{"path":"x/../y"}},`, 1),
		"long description":       strings.Replace(minimalFile, `{`, `{"description":"`+strings.Repeat("é", 1025)+`",`, 1),
		"control in description": strings.Replace(minimalFile, `{`, `{"description":"a\u0007b",`, 1),
		"version with a space":   strings.Replace(minimalFile, `{`, `{"version":"1 2",`, 1),
		"long version":           strings.Replace(minimalFile, `{`, `{"version":"`+strings.Repeat("a", 129)+`",`, 1),
		"bad ebs volume type":    strings.Replace(minimalFile, `"instance_type"`, `"ebs_volume_size":1,"ebs_volume_type":"gp9","instance_type"`, 1),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Error(t, schemaValidate(t, schema, []byte(data)))
			r, err := DecodeFile([]byte(data))
			if err == nil {
				err = r.Validate(false)
			}
			assert.Error(t, err)
		})
	}
	assert.NoError(t, schemaValidate(t, schema, []byte(minimalFile)))
	assert.True(t, json.Valid(Schema()))
}

// FuzzDecodeValidate: decoding, defaults and validation never panic, and a
// release that validates re-encodes, decodes and validates again with the
// same hash.
func FuzzDecodeValidate(f *testing.F) {
	f.Add([]byte(minimalFile))
	f.Add([]byte(`{"services":{"w":{"autoscaling":{"spread":0.5,"policies":[{"type":"cpu_scale_up"}]}}}}`))
	for _, pattern := range []string{"*.json", "invalid/*.json"} {
		files, _ := filepath.Glob(filepath.Join(repoTestdata, pattern))
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeFile(data)
		if err != nil {
			problemsOf(t, err)
			return
		}
		r.ApplyDefaults()
		if problemsOf(t, r.Validate(false)) != nil {
			return
		}
		h1, err := Hash(r)
		require.NoError(t, err)
		encoded, err := json.Marshal(r)
		require.NoError(t, err)
		again, err := DecodeFile(encoded)
		require.NoError(t, err, "re-decoding %s", encoded)
		require.NoError(t, again.Validate(false), "re-validating %s", encoded)
		h2, err := Hash(again)
		require.NoError(t, err)
		require.Equal(t, h1, h2)
		canon, err := Canonical(r)
		require.NoError(t, err)
		fromCanon, err := DecodeFile(canon)
		require.NoError(t, err, "decoding the canonical form %s", canon)
		h3, err := Hash(fromCanon)
		require.NoError(t, err)
		require.Equal(t, h1, h3)
	})
}
