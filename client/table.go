package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"
)

// table is rows of cells under a header, laid out for a terminal's width
// (write): columns two spaces apart, every cell on one row.
type table struct {
	header []string
	rows   [][]string
	// shrink are the steps that narrow the table, in order, taken one by
	// one until it fits the width: drop a column, or abbreviate its cells.
	shrink []shrinkStep
}

// shrinkStep narrows a table: it drops column col, or, with abbrev set,
// replaces each of its cells (not the header) with abbrev's.
type shrinkStep struct {
	col    string
	abbrev func(string) string
}

// add appends a row; its trailing empty cells are left out.
func (t *table) add(cells ...string) { t.rows = append(t.rows, trimCells(cells)) }

// write writes the table on w to fit width columns (0: no limit, as in a
// log or a pipe): the shrink steps are taken until every row fits, then
// the last column is cut with "…" where a row is still too wide. No row
// ever takes the last column of the terminal, which some terminals wrap
// at.
func (t *table) write(w io.Writer, width int) {
	header, rows := t.header, t.rows
	for _, step := range t.shrink {
		if width <= 0 || tableWidth(header, rows) < width {
			break
		}
		header, rows = step.apply(header, rows)
	}
	for _, line := range alignCells(append([][]string{header}, rows...)) {
		fmt.Fprintln(w, fitWidth(line, width))
	}
}

// alignCells lays rows out in columns two spaces apart, each as wide as
// its widest cell but a row's last, which is not padded.
func alignCells(rows [][]string) []string {
	widths := columnWidths(rows)
	lines := make([]string, 0, len(rows))
	for _, cells := range rows {
		var b strings.Builder
		for i, c := range cells {
			if i == len(cells)-1 {
				b.WriteString(c)
				break
			}
			b.WriteString(c + strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
		}
		lines = append(lines, strings.TrimRight(b.String(), " "))
	}
	return lines
}

// apply is the table's header and rows once s is taken; a column the
// header does not have is left as it is.
func (s shrinkStep) apply(header []string, rows [][]string) ([]string, [][]string) {
	col := -1
	for i, h := range header {
		if h == s.col {
			col = i
		}
	}
	if col < 0 {
		return header, rows
	}
	out := make([][]string, len(rows))
	for i, r := range rows {
		switch {
		case col >= len(r):
			out[i] = r
		case s.abbrev != nil:
			out[i] = append(append(append([]string{}, r[:col]...), s.abbrev(r[col])), r[col+1:]...)
		default:
			out[i] = append(append([]string{}, r[:col]...), r[col+1:]...)
		}
	}
	if s.abbrev != nil {
		return header, out
	}
	return append(append([]string{}, header[:col]...), header[col+1:]...), trimEmpty(out)
}

// trimEmpty drops each row's trailing empty cells.
func trimEmpty(rows [][]string) [][]string {
	for i, r := range rows {
		rows[i] = trimCells(r)
	}
	return rows
}

// trimCells is cells without its trailing empty ones.
func trimCells(cells []string) []string {
	for len(cells) > 0 && cells[len(cells)-1] == "" {
		cells = cells[:len(cells)-1]
	}
	return cells
}

// columnWidths is the width of each column: its widest cell that is not
// the last of its row (a row's last cell is not padded).
func columnWidths(rows [][]string) []int {
	var widths []int
	for _, r := range rows {
		for i, c := range r[:max(len(r)-1, 0)] {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	return widths
}

// tableWidth is the width of the widest row of the table as write lays
// it out.
func tableWidth(header []string, rows [][]string) int {
	all := append([][]string{header}, rows...)
	widths := columnWidths(all)
	widest := 0
	for _, r := range all {
		n := 0
		for i, c := range r {
			if i == len(r)-1 {
				n += utf8.RuneCountInString(c)
				break
			}
			n += widths[i] + 2
		}
		widest = max(widest, n)
	}
	return widest
}

// terminalWidth is the width in columns of the terminal w is, 0 when it
// is not one (a log, a pipe, a file).
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return cols
}
