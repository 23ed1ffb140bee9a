package help

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// MinWidth is the narrowest width Text lays a page out for.
const MinWidth = 40

// Text renders a page's markdown as plain text for a terminal width
// columns wide (at least MinWidth): headings underlined, paragraphs and
// list items wrapped, tables as aligned columns when they fit, else one
// block a row; code blocks are indented and kept as they are, so a long
// code line is the only line that may be wider than width.
func Text(markdown string, width int) string {
	var b strings.Builder
	writeBlocks(&b, parse(markdown), "", max(width, MinWidth))
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// writeBlocks writes blocks, each line after indent, a blank line between
// blocks.
func writeBlocks(b *strings.Builder, blocks []block, indent string, width int) {
	first := true
	for _, bl := range blocks {
		if bl.kind == blockHTML && plain(parseInline(stripTags(bl.text))) == "" {
			continue
		}
		if !first {
			b.WriteString("\n")
		}
		first = false
		writeBlock(b, bl, indent, width)
	}
}

// writeBlock writes one block.
func writeBlock(b *strings.Builder, bl block, indent string, width int) {
	switch bl.kind {
	case blockHeading:
		title := plain(parseInline(bl.text))
		b.WriteString(indent + title + "\n")
		if bl.level <= 2 {
			rule := map[int]string{1: "=", 2: "-"}[bl.level]
			b.WriteString(indent + strings.Repeat(rule, utf8.RuneCountInString(title)) + "\n")
		}
	case blockCode:
		for _, l := range bl.lines {
			b.WriteString(strings.TrimRight(indent+"    "+l, " ") + "\n")
		}
	case blockTable:
		writeTable(b, bl.rows, indent, width)
	case blockList:
		writeList(b, bl, indent, width)
	case blockImage:
		wrap(b, "[image: "+bl.text+"]", indent, indent, width)
	case blockHTML:
		wrap(b, plain(parseInline(stripTags(bl.text))), indent, indent, width)
	default:
		wrap(b, plain(parseInline(bl.text)), indent, indent, width)
	}
}

// writeList writes a list's items, "- " or "1. " before each, their
// blocks indented under the marker.
func writeList(b *strings.Builder, bl block, indent string, width int) {
	for i, item := range bl.items {
		marker := "- "
		if bl.ordered {
			marker = strconv.Itoa(i+1) + ". "
		}
		var inner strings.Builder
		writeBlocks(&inner, item, "", width-len(indent)-len(marker))
		pad := strings.Repeat(" ", len(marker))
		for j, l := range strings.Split(strings.TrimRight(inner.String(), "\n"), "\n") {
			switch {
			case j == 0:
				b.WriteString(indent + marker + l + "\n")
			case l == "":
				b.WriteString("\n")
			default:
				b.WriteString(indent + pad + l + "\n")
			}
		}
	}
}

// writeTable writes a table as aligned columns when it fits in width; as
// aligned columns with the last wrapped under itself when only that one
// is too wide; else as a block a row: the first cell, then each other
// cell after its column's header.
func writeTable(b *strings.Builder, rows [][]string, indent string, width int) {
	cells := make([][]string, len(rows))
	widths := []int{}
	for i, r := range rows {
		for j, c := range r {
			cells[i] = append(cells[i], plain(parseInline(c)))
			if j >= len(widths) {
				widths = append(widths, 0)
			}
			widths[j] = max(widths[j], utf8.RuneCountInString(cells[i][j]))
		}
	}
	avail := width - len(indent)
	lead := 0 // the columns before the last, with their gaps
	for _, w := range widths[:len(widths)-1] {
		lead += w + 2
	}
	switch {
	case lead+widths[len(widths)-1] <= avail || (len(widths) > 1 && lead <= avail/2):
		writeColumns(b, cells, widths, indent, avail-lead)
	default:
		writeRecords(b, cells, indent, width)
	}
}

// writeColumns writes cells as aligned columns, the header underlined,
// the last column wrapped to last columns.
func writeColumns(b *strings.Builder, cells [][]string, widths []int, indent string, last int) {
	for i, row := range cells {
		var head strings.Builder
		head.WriteString(indent)
		for j, c := range row[:len(row)-1] {
			head.WriteString(c + strings.Repeat(" ", widths[j]-utf8.RuneCountInString(c)+2))
		}
		hang := strings.Repeat(" ", utf8.RuneCountInString(head.String()))
		wrap(b, row[len(row)-1], head.String(), hang, utf8.RuneCountInString(head.String())+last)
		if i == 0 {
			var rule []string
			for j, w := range widths {
				if j == len(widths)-1 {
					w = min(w, last)
				}
				rule = append(rule, strings.Repeat("-", w))
			}
			b.WriteString(indent + strings.Join(rule, "  ") + "\n")
		}
	}
}

// writeRecords writes each row after the header as a block: its first
// cell, then "header: cell" for the others, indented under it.
func writeRecords(b *strings.Builder, cells [][]string, indent string, width int) {
	header := cells[0]
	for i, row := range cells[1:] {
		if i > 0 {
			b.WriteString("\n")
		}
		wrap(b, row[0], indent, indent+"  ", width)
		for j, c := range row[1:] {
			if j+1 >= len(header) || c == "" {
				continue
			}
			wrap(b, header[j+1]+": "+c, indent+"  ", indent+"      ", width)
		}
	}
}

// wrap writes text's words in lines of at most width columns, the first
// after first, the others after hang; a word wider than a line gets a
// line of its own.
func wrap(b *strings.Builder, text, first, hang string, width int) {
	line := first
	n := utf8.RuneCountInString(first)
	empty := true
	for _, w := range strings.Fields(text) {
		wn := utf8.RuneCountInString(w)
		if !empty && n+1+wn > width {
			b.WriteString(line + "\n")
			line, n, empty = hang, utf8.RuneCountInString(hang), true
		}
		if !empty {
			line, n = line+" ", n+1
		}
		line, n, empty = line+w, n+wn, false
	}
	b.WriteString(strings.TrimRight(line, " ") + "\n")
}

// plain is spans as text: code spans' content as it is, emphasis without
// its marks, a link as its text with where it leads (another page as
// "ferry help NAME", a web address in parentheses).
func plain(spans []span) string {
	var b strings.Builder
	for _, s := range spans {
		switch s.kind {
		case spanText, spanCode:
			b.WriteString(s.text)
		case spanStrong, spanEm:
			b.WriteString(plain(s.children))
		case spanLink:
			b.WriteString(plainLink(s))
		}
	}
	return b.String()
}

// plainLink is a link as text.
func plainLink(s span) string {
	text := plain(s.children)
	if name, _, ok := topicOf(s.url); ok {
		if text == name {
			return "'ferry help " + name + "'"
		}
		return text + " ('ferry help " + name + "')"
	}
	if strings.HasPrefix(s.url, "https://") || strings.HasPrefix(s.url, "http://") {
		if text == s.url {
			return text
		}
		return text + " (" + s.url + ")"
	}
	return text // a path in the repository or an anchor of this page
}

// stripTags removes HTML tags from a line of HTML.
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}
