package spelling

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClosest(t *testing.T) {
	commands := []string{"deploy", "follow", "halt", "list", "local", "status", "unlock", "validate"}
	for _, tc := range []struct {
		word  string
		known []string
		want  string
	}{
		{"deploi", commands, "deploy"},
		{"stauts", commands, "status"},    // a transposition is two edits
		{"valdate", commands, "validate"}, // a deletion
		{"lokal", commands, "local"},
		{"lst", commands, "list"},
		{"halt", commands, "halt"},                     // known: itself
		{"xyzzy", commands, ""},                        // near nothing
		{"de", commands, ""},                           // too short to say
		{"lacal", []string{"local", "lacan"}, "lacan"}, // one edit beats two
		{"abcd", []string{"abcx", "abce"}, "abce"},     // a tie: the first in order
		{strings.Repeat("a", 65), []string{strings.Repeat("a", 64)}, ""},
	} {
		t.Run(tc.word, func(t *testing.T) {
			got, ok := Closest(tc.word, tc.known)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.want != "", ok)
		})
	}
}

// TestClosestTiesDoNotDependOnOrder: of equally near words, the one that
// sorts first, whatever order they are given in.
func TestClosestTiesDoNotDependOnOrder(t *testing.T) {
	a, _ := Closest("abcd", []string{"abcx", "abce"})
	b, _ := Closest("abcd", []string{"abce", "abcx"})
	assert.Equal(t, "abce", a)
	assert.Equal(t, a, b)
}

func FuzzDistance(f *testing.F) {
	f.Add("kitten", "sitting")
	f.Add("", "abc")
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 64 || len(b) > 64 {
			return
		}
		d := distance(a, b)
		assert.Equal(t, d, distance(b, a), "symmetric")
		assert.LessOrEqual(t, d, max(len(a), len(b)))
		assert.GreaterOrEqual(t, d, abs(len(a)-len(b)))
		assert.Equal(t, d == 0, a == b)
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
