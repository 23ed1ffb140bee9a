package help

import (
	"regexp"
	"strings"
)

// blockKind is what a block of a page is.
type blockKind int

const (
	blockParagraph blockKind = iota
	blockHeading
	blockCode
	blockTable
	blockList
	blockHTML  // a line of raw HTML (the details element), shown only in HTML
	blockImage // ![alt](src) alone on its line
)

// block is one block of a page.
type block struct {
	kind blockKind
	// level is a heading's (1 for #).
	level int
	// text is a paragraph's or a heading's inline markdown, an image's
	// alt text, an HTML line as it is.
	text string
	// lines are a code block's lines, as they are.
	lines []string
	// rows are a table's cells (inline markdown), the header first.
	rows [][]string
	// items are a list's items, each its own blocks; ordered lists are
	// numbered from 1.
	items   [][]block
	ordered bool
}

// The line shapes the block parser tells apart.
var (
	headingRe = regexp.MustCompile(`^(#{1,6}) +(.*?)#*\s*$`)
	bulletRe  = regexp.MustCompile(`^([-*]) +`)
	orderedRe = regexp.MustCompile(`^[0-9]{1,9}[.)] +`)
	imageRe   = regexp.MustCompile(`^!\[([^\]]*)\]\(([^)]*)\)\s*$`)
	ruleRe    = regexp.MustCompile(`^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$`)
)

// parse splits markdown into blocks.
func parse(markdown string) []block {
	return parseLines(strings.Split(strings.ReplaceAll(markdown, "\r\n", "\n"), "\n"))
}

// parseLines parses the lines of one container (the page, a list item).
func parseLines(lines []string) []block {
	var out []block
	for i := 0; i < len(lines); {
		l := lines[i]
		trimmed := strings.TrimSpace(l)
		switch {
		case trimmed == "":
			i++
		case strings.HasPrefix(trimmed, "```"):
			b, n := parseFence(lines[i:])
			out, i = append(out, b), i+n
		case strings.HasPrefix(trimmed, "<!--"):
			i += skipComment(lines[i:])
		case strings.HasPrefix(trimmed, "<") && !strings.HasPrefix(trimmed, "<http"):
			out, i = append(out, block{kind: blockHTML, text: trimmed}), i+1
		case headingRe.MatchString(l):
			m := headingRe.FindStringSubmatch(l)
			out, i = append(out, block{kind: blockHeading, level: len(m[1]), text: m[2]}), i+1
		case strings.HasPrefix(l, "|"):
			b, n := parseTable(lines[i:])
			out, i = append(out, b), i+n
		case imageRe.MatchString(l):
			out, i = append(out, block{kind: blockImage, text: imageRe.FindStringSubmatch(l)[1]}), i+1
		case listMarker(l) > 0:
			b, n := parseList(lines[i:])
			out, i = append(out, b), i+n
		default:
			b, n := parseParagraph(lines[i:])
			out, i = append(out, b), i+n
		}
	}
	return out
}

// parseFence reads a fenced code block from its opening line; n is the
// lines it took (an unclosed fence runs to the end).
func parseFence(lines []string) (b block, n int) {
	indent := len(lines[0]) - len(strings.TrimLeft(lines[0], " "))
	b = block{kind: blockCode}
	for n = 1; n < len(lines); n++ {
		if strings.TrimSpace(lines[n]) == "```" {
			return b, n + 1
		}
		l := lines[n]
		l = l[min(indent, len(l)-len(strings.TrimLeft(l, " "))):]
		b.lines = append(b.lines, l)
	}
	return b, n
}

// skipComment returns how many lines an HTML comment takes.
func skipComment(lines []string) int {
	for n, l := range lines {
		if strings.Contains(l, "-->") {
			return n + 1
		}
	}
	return len(lines)
}

// parseTable reads the lines of a pipe table; the delimiter row is
// dropped.
func parseTable(lines []string) (b block, n int) {
	b = block{kind: blockTable}
	for ; n < len(lines) && strings.HasPrefix(lines[n], "|"); n++ {
		if n == 1 && ruleRe.MatchString(lines[n]) {
			continue
		}
		b.rows = append(b.rows, splitRow(lines[n]))
	}
	return b, n
}

// splitRow splits a table row into its cells, honouring \| and code
// spans, which may hold a |.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var cells []string
	var cell strings.Builder
	inCode := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && i+1 < len(line) && line[i+1] == '|':
			cell.WriteByte('|')
			i++
		case c == '`':
			inCode = !inCode
			cell.WriteByte(c)
		case c == '|' && !inCode:
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(c)
		}
	}
	return append(cells, strings.TrimSpace(cell.String()))
}

// listMarker returns the width of the list marker line starts with ("- ",
// "1. "), 0 when it starts none.
func listMarker(line string) int {
	if m := bulletRe.FindString(line); m != "" {
		return len(m)
	}
	return len(orderedRe.FindString(line))
}

// parseList reads consecutive items of one list: each is its marker's
// line and the lines after it that are blank or indented, de-indented by
// the marker's width.
func parseList(lines []string) (b block, n int) {
	b = block{kind: blockList, ordered: bulletRe.FindString(lines[0]) == ""}
	for n < len(lines) {
		width := listMarker(lines[n])
		if width == 0 || (bulletRe.FindString(lines[n]) == "") != b.ordered {
			break
		}
		item := []string{lines[n][width:]}
		n++
		for n < len(lines) {
			l := lines[n]
			if strings.TrimSpace(l) == "" {
				if n+1 < len(lines) && indentOf(lines[n+1]) > 0 {
					item, n = append(item, ""), n+1
					continue
				}
				break
			}
			if indentOf(l) == 0 {
				break
			}
			item, n = append(item, l[min(width, indentOf(l)):]), n+1
		}
		b.items = append(b.items, parseLines(item))
		for n < len(lines) && strings.TrimSpace(lines[n]) == "" && n+1 < len(lines) && listMarker(lines[n+1]) > 0 {
			n++ // a blank line between items
		}
	}
	return b, n
}

// indentOf is how many spaces line starts with.
func indentOf(line string) int {
	return len(line) - len(strings.TrimLeft(line, " "))
}

// parseParagraph reads lines up to a blank line or the start of another
// block, joined by spaces.
func parseParagraph(lines []string) (b block, n int) {
	var text []string
	for ; n < len(lines); n++ {
		l := lines[n]
		t := strings.TrimSpace(l)
		if t == "" || (n > 0 && interrupts(l)) {
			break
		}
		text = append(text, t)
	}
	return block{kind: blockParagraph, text: strings.Join(text, " ")}, n
}

// interrupts reports whether line starts a block that ends the paragraph
// before it: a heading, fence, table, comment, bullet, or a list numbered
// from 1.
func interrupts(line string) bool {
	t := strings.TrimSpace(line)
	return headingRe.MatchString(line) || strings.HasPrefix(t, "```") || strings.HasPrefix(line, "|") ||
		strings.HasPrefix(t, "<!--") || bulletRe.MatchString(line) || strings.HasPrefix(line, "1. ")
}
