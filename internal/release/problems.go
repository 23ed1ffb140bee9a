package release

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ferryhq/ferry/internal/failure"
)

// problems collects "path: message" lines.
type problems struct {
	list []string
}

// add records one problem at path. A problem about the whole release has
// the path "release".
func (p *problems) add(path, format string, args ...any) {
	if path == "" {
		path = "release"
	}
	p.list = append(p.list, path+": "+fmt.Sprintf(format, args...))
}

// err returns nil when there is no problem, else a *failure.BadReleaseError
// with every problem, sorted and without duplicates.
func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	out := slices.Clone(p.list)
	slices.Sort(out)
	return failure.BadRelease(slices.Compact(out)...)
}

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

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

// SplitProblem splits a problem line "path: message" into its path and
// message. The path may contain quoted keys (`tags["a: b"]`); the split is
// at the first ": " outside quotes. A line without a path returns "" and
// the whole line.
func SplitProblem(line string) (path, message string) {
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
