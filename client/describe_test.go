package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ferryhq/ferry/internal/release"
)

func TestDescribeRelease(t *testing.T) {
	tests := []struct {
		name                 string
		version, description string
		want                 string
	}{
		{"neither", "", "", ""},
		{"version only", "1042", "", "  version 1042"},
		{"description only", "", "Fix the\nlogin page", "  Fix the login page"},
		{"both", "abc1234", "Fix it", "  version abc1234: Fix it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, describeRelease(&release.Release{Version: tt.version, Description: tt.description}))
		})
	}
	assert.Empty(t, deployerVersion(""))
	assert.Equal(t, "deployer v1 (commit c, go1.26)", deployerVersion("v1 (commit c, go1.26)"))
}

func TestGroupsIn(t *testing.T) {
	tests := []struct {
		name, output     string
		created, retired []string
	}{
		{"not a state", `"x"`, nil, nil},
		{"no output", ``, nil, nil},
		{"first deploy", `{"project_name":"o/p","config_name":"dev","release_id":"r2","services":["web","worker"]}`,
			[]string{"o/p/dev/web/r2", "o/p/dev/worker/r2"}, nil},
		{"a swap", `{"project_name":"o/p","config_name":"dev","release_id":"r2","services":["web"],"retired":["o/p/dev/web/r1"]}`,
			[]string{"o/p/dev/web/r2"}, []string{"o/p/dev/web/r1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			created, retired := groupsIn(tt.output)
			assert.Equal(t, tt.created, created)
			assert.Equal(t, tt.retired, retired)
		})
	}
}
