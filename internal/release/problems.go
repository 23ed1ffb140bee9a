package release

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/release/textpos"
)

// problems collects "path: message" lines.
type problems struct {
	list []string
	// root is the path of a problem about the whole document: "release"
	// when empty.
	root string
}

// add records one problem at path. A problem about the whole document
// has the path p.root ("release").
func (p *problems) add(path, format string, args ...any) {
	if path == "" {
		path = cmp.Or(p.root, "release")
	}
	p.list = append(p.list, path+": "+fmt.Sprintf(format, args...))
}

// err returns nil when there is no problem, else a *failure.BadReleaseError
// with every problem, sorted and without duplicates.
func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return failure.BadRelease(p.sorted()...)
}

// sorted returns every problem, sorted and without duplicates.
func (p *problems) sorted() []string {
	out := slices.Clone(p.list)
	slices.Sort(out)
	return slices.Compact(out)
}

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Field returns the path of key inside the object at path, as every
// problem of ferry's documents names it (see field).
func Field(path, key string) string { return field(path, key) }

// field returns the path of key inside the object at path: "a.b" when key
// is plain, `a["odd key"]` (quoted, ASCII only) otherwise, so a key can
// never forge a path or smuggle control characters into a message.
func field(path, key string) string {
	if !plainKey.MatchString(key) {
		return path + "[" + strconv.QuoteToASCII(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// index returns the path of element i of the array at path.
func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// Problem is one problem of a release, parsed from its line: where it is
// (a path in the release, or for malformed JSON a position in the file)
// and what is wrong.
type Problem struct {
	// Path is where in the release: "services.web.ami", `tags["a: b"]`,
	// "release" for the whole release; "" when the problem has a Line
	// instead, or no place at all.
	Path string `json:"path"`
	// Line and Column (both from 1, columns in characters) place a
	// problem of the file's JSON syntax; 0 otherwise.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// Message says what is wrong.
	Message string `json:"message"`
}

// String is the problem's line again: "path: message", "line L, column
// C: message", or the message alone.
func (p Problem) String() string {
	switch {
	case p.Line > 0:
		return textpos.Position{Line: p.Line, Column: p.Column}.String() + ": " + p.Message
	case p.Path != "":
		return p.Path + ": " + p.Message
	}
	return p.Message
}

// ParseProblem parses a problem line: "path: message" (the path may hold
// quoted keys, `tags["a: b"]`; the split is at the first ": " outside
// quotes), "line L, column C: message", or a message alone.
func ParseProblem(line string) Problem {
	path, msg := splitProblem(line)
	if pos, ok := textpos.Parse(path); ok {
		return Problem{Line: pos.Line, Column: pos.Column, Message: msg}
	}
	return Problem{Path: path, Message: msg}
}

// splitProblem splits a problem line at the first ": " outside quotes; a
// line without one returns "" and the whole line.
func splitProblem(line string) (path, message string) {
	inQuote, escaped := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case escaped:
			escaped = false
		case inQuote && c == '\\':
			escaped = true
		case c == '"':
			inQuote = !inQuote
		case !inQuote && c == ':' && strings.HasPrefix(line[i:], ": "):
			return line[:i], line[i+2:]
		}
	}
	return "", line
}
