package main

import (
	"fmt"
	"io"

	"github.com/ferryhq/ferry/client/help"
)

// maxPageWidth is the widest a page of the reference is laid out, however
// wide the terminal: longer lines are hard to read.
const maxPageWidth = 100

// writePage writes a page of the reference on w: laid out for the
// terminal's width when w is a terminal (terminalWidth), else its
// markdown as it is (for a pager that renders markdown, or a file).
func writePage(w io.Writer, page string) {
	if width := terminalWidth(w); width > 0 {
		fmt.Fprint(w, help.Text(page, min(width, maxPageWidth)))
		return
	}
	fmt.Fprint(w, page)
}
