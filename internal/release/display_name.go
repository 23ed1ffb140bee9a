package release

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxCreatedByBytes bounds a release's created_by, in bytes of UTF-8.
const MaxCreatedByBytes = 512

// DisplayName returns s as a created_by may hold it, keeping every letter
// of every script whole ("José", "Jane Doe", "山田 太郎"): runs of
// whitespace become one space, with none at either end; the characters a
// terminal cannot show as themselves are removed (control characters,
// and format characters such as bidirectional overrides and zero-width
// spaces, so a name can neither move the cursor nor reorder the text
// around it, nor look like another); invalid UTF-8 is removed; and it is
// cut to MaxCreatedByBytes on a character boundary. It is idempotent.
func DisplayName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.Is(unicode.Cf, r) || !(unicode.IsSpace(r) || unicode.IsGraphic(r)) {
			return -1
		}
		return r
	}, s)
	s = strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
	if len(s) > MaxCreatedByBytes {
		cut := MaxCreatedByBytes
		for !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = strings.TrimSpace(s[:cut])
	}
	return s
}

// IsDisplayName reports whether s is a valid created_by: not empty, and
// what DisplayName makes of it.
func IsDisplayName(s string) bool { return s != "" && DisplayName(s) == s }
