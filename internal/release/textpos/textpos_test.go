package textpos

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAt(t *testing.T) {
	data := []byte("{\n  \"é\": 1,\n  x\n}")
	for _, tc := range []struct {
		off  int64
		want Position
	}{
		{0, Position{1, 1}},
		{1, Position{1, 2}},
		{2, Position{2, 1}},
		{9, Position{2, 7}}, // after "é" (2 bytes, 1 column) and the quote, the colon: column 7
		{15, Position{3, 3}},
		{-1, Position{1, 1}},
		{999, Position{4, 2}},
	} {
		assert.Equal(t, tc.want, At(data, tc.off), "offset %d", tc.off)
	}
}

func TestStringParseIn(t *testing.T) {
	p := Position{Line: 3, Column: 7}
	assert.Equal(t, "line 3, column 7", p.String())
	assert.Equal(t, "world.json:3:7", p.In("world.json"))
	got, ok := Parse(p.String())
	assert.True(t, ok)
	assert.Equal(t, p, got)
	for _, s := range []string{"", "line 3", "line 3, column 7x", "line 0, column 1", "services.web", "line 03, column 7"} {
		_, ok := Parse(s)
		assert.False(t, ok, s)
	}
}

func FuzzAt(f *testing.F) {
	f.Add([]byte("a\nbc\n"), int64(3))
	f.Fuzz(func(t *testing.T, data []byte, off int64) {
		p := At(data, off)
		assert.GreaterOrEqual(t, p.Line, 1)
		assert.GreaterOrEqual(t, p.Column, 1)
		got, ok := Parse(p.String())
		assert.True(t, ok)
		assert.Equal(t, p, got)
	})
}
