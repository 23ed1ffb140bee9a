package buildinfo

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestResolve(t *testing.T) {
	vcs := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/ferryhq/ferry", Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc123"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	tests := []struct {
		name                string
		linkVersion, commit string
		bi                  *debug.BuildInfo
		want                Info
	}{
		{"linker values win", "v1.2.3-4-gabc", "abc", vcs, Info{"v1.2.3-4-gabc", "abc", "go1.26.8"}},
		{"toolchain fallback, dirty tree", "", "", vcs, Info{"(devel)", "abc123-dirty", "go1.26.8"}},
		{"clean tree", "", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.0.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "def"}, {Key: "vcs.modified", Value: "false"}}},
			Info{"v1.0.0", "def", "go1.26.8"}},
		{"no build info", "", "", nil, Info{Unknown, Unknown, Unknown}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, resolve(tt.linkVersion, tt.commit, tt.bi))
		})
	}
}

func TestGetNamesTheRunningGo(t *testing.T) {
	info := Get()
	assert.Equal(t, runtime.Version(), info.GoVersion)
	assert.NotEmpty(t, info.Version)
	assert.Equal(t, "v9 (commit c0ffee, go1.26.8)", Info{"v9", "c0ffee", "go1.26.8"}.String())
}
