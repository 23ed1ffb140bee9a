package release

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestDisplayName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Jane Doe", "Jane Doe"},
		{"José", "José"},
		{"山田 太郎", "山田 太郎"},
		{"  Jane \t Doe \n", "Jane Doe"},
		{"ci-bot@runner-7", "ci-bot@runner-7"},
		{"alice\x1b[31m", "alice[31m"},   // the escape that would colour the terminal
		{"alice\u202ebob", "alicebob"},   // a bidirectional override
		{"zero\u200bwidth", "zerowidth"}, // a zero-width space
		{"bad\xffutf8", "badutf8"},
		{"\x00\x01", ""},
		{strings.Repeat("é", 300), strings.Repeat("é", 256)}, // 512 bytes, cut between characters
	} {
		t.Run(tc.in, func(t *testing.T) {
			got := DisplayName(tc.in)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, got, DisplayName(got), "idempotent")
			assert.Equal(t, got != "", IsDisplayName(got))
		})
	}
	assert.False(t, IsDisplayName("Jane  Doe"), "repeated spaces")
	assert.False(t, IsDisplayName(""))
}

func FuzzDisplayName(f *testing.F) {
	f.Add("José\u202e \x00")
	f.Fuzz(func(t *testing.T, s string) {
		got := DisplayName(s)
		assert.True(t, utf8.ValidString(got))
		assert.LessOrEqual(t, len(got), MaxCreatedByBytes)
		assert.Equal(t, got, DisplayName(got), "idempotent")
		if got != "" {
			assert.True(t, IsDisplayName(got))
		}
	})
}
