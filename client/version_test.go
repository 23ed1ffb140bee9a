package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/buildinfo"
)

func TestVersion(t *testing.T) {
	want := "ferry " + buildinfo.Get().String() + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		t.Run(args[0], func(t *testing.T) {
			code, stdout, stderr := runFerry(t, args...)
			assert.Equal(t, exitOK, code)
			assert.Empty(t, stderr)
			assert.Equal(t, want, stdout)
		})
	}
	t.Run("json", func(t *testing.T) {
		code, stdout, _ := runFerry(t, "version", "--json")
		require.Equal(t, exitOK, code)
		var got buildinfo.Info
		require.NoError(t, json.Unmarshal([]byte(stdout), &got))
		assert.Equal(t, buildinfo.Get(), got)
	})
	t.Run("arguments are a usage error", func(t *testing.T) {
		code, _, stderr := runFerry(t, "version", "extra")
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, stderr, "ferry version: takes no arguments")
	})
}
