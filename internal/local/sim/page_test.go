package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPageStart(t *testing.T) {
	names := []string{"a", "c", "e"}
	tests := []struct {
		name      string
		token     string
		wantStart int
		wantOK    bool
	}{
		{"no token: the first page", "", 0, true},
		{"after a name", *pageToken("a"), 1, true},
		{"after a name that is gone", *pageToken("b"), 1, true},
		{"after the last name", *pageToken("e"), 3, true},
		{"a token of another form", "garbage", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, ok := pageStart(names, tt.token)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.wantStart, start)
		})
	}
}
