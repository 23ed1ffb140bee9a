package help

import "strings"

// spanKind is what a piece of inline markdown is.
type spanKind int

const (
	spanText spanKind = iota
	spanCode
	spanStrong
	spanEm
	spanLink
)

// span is a piece of a paragraph, heading or cell.
type span struct {
	kind spanKind
	// text is a text's or a code span's content.
	text string
	// children are what emphasis and links hold.
	children []span
	// url is a link's target.
	url string
}

// parseInline splits inline markdown into spans: code spans, **strong**,
// *emphasis*, [links](url), \-escapes; everything else is text.
func parseInline(s string) []span {
	var out []span
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, span{kind: spanText, text: text.String()})
			text.Reset()
		}
	}
	for i := 0; i < len(s); {
		sp, n := inlineAt(s, i)
		if n == 0 {
			if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\`*_[]()#|<>!-", s[i+1]) >= 0 {
				i++
			}
			text.WriteByte(s[i])
			i++
			continue
		}
		flush()
		out = append(out, sp)
		i += n
	}
	flush()
	return out
}

// inlineAt returns the span that starts at s[i] and its length, n 0 when
// none does (s[i] is text).
func inlineAt(s string, i int) (span, int) {
	switch {
	case s[i] == '`':
		return codeAt(s, i)
	case strings.HasPrefix(s[i:], "**"):
		if end := closing(s, i+2, "**"); end > i+2 {
			return span{kind: spanStrong, children: parseInline(s[i+2 : end])}, end + 2 - i
		}
	case s[i] == '*' && i+1 < len(s) && s[i+1] != ' ' && (i == 0 || !isWordByte(s[i-1])):
		if end := closing(s, i+1, "*"); end > i+1 && s[end-1] != ' ' && (end+1 >= len(s) || !isWordByte(s[end+1])) {
			return span{kind: spanEm, children: parseInline(s[i+1 : end])}, end + 1 - i
		}
	case s[i] == '[':
		return linkAt(s, i)
	}
	return span{}, 0
}

// codeAt reads a code span of as many backticks as open it.
func codeAt(s string, i int) (span, int) {
	ticks := len(s[i:]) - len(strings.TrimLeft(s[i:], "`"))
	fence := s[i : i+ticks]
	end := strings.Index(s[i+ticks:], fence)
	if end < 0 {
		return span{}, 0
	}
	content := s[i+ticks : i+ticks+end]
	if ticks > 1 {
		content = strings.TrimSpace(content)
	}
	return span{kind: spanCode, text: content}, 2*ticks + end
}

// linkAt reads [text](url).
func linkAt(s string, i int) (span, int) {
	mid := closing(s, i+1, "]")
	if mid < 0 || !strings.HasPrefix(s[mid:], "](") {
		return span{}, 0
	}
	end := strings.IndexByte(s[mid+2:], ')')
	if end < 0 {
		return span{}, 0
	}
	return span{kind: spanLink, children: parseInline(s[i+1 : mid]), url: s[mid+2 : mid+2+end]}, mid + 3 + end - i
}

// closing returns the index of delim in s at or after from, skipping code
// spans; -1 when there is none.
func closing(s string, from int, delim string) int {
	for j := from; j < len(s); j++ {
		if s[j] == '`' {
			if _, n := codeAt(s, j); n > 0 {
				j += n - 1
				continue
			}
		}
		if strings.HasPrefix(s[j:], delim) {
			return j
		}
	}
	return -1
}

// isWordByte reports whether c is a letter or digit: *emphasis* opens
// and closes only beside other characters (2*3*4 is text).
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
