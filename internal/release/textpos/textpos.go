package textpos

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// Position is a place in a text: Line and Column both count from 1, and
// Column counts characters (UTF-8 runes), not bytes.
type Position struct {
	Line   int
	Column int
}

// format is how String writes a position and Parse reads one.
const format = "line %d, column %d"

// At returns the position of byte offset off in data. An offset past the
// end is the end; a negative one the start.
func At(data []byte, off int64) Position {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	return Position{
		Line:   bytes.Count(before, []byte("\n")) + 1,
		Column: utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1,
	}
}

// String is "line L, column C".
func (p Position) String() string { return fmt.Sprintf(format, p.Line, p.Column) }

// In is the position in file as compilers and editors write it,
// "FILE:L:C", so a terminal or an editor can jump to it.
func (p Position) In(file string) string { return fmt.Sprintf("%s:%d:%d", file, p.Line, p.Column) }

// Parse reads a position String wrote; false when s is anything else.
func Parse(s string) (Position, bool) {
	var p Position
	n, err := fmt.Sscanf(s, format, &p.Line, &p.Column)
	if err != nil || n != 2 || p.Line < 1 || p.Column < 1 || p.String() != s {
		return Position{}, false
	}
	return p, true
}
