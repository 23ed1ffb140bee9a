// Package help owns ferry's reference: the markdown pages of this folder
// (release.md, guarantees.md, ...), which GitHub shows as they are, the
// README links, and this package embeds in the ferry binary.
//
// Topics lists the pages in reading order, each with the one-line summary
// ferry help and the README show; Page returns one page's markdown. Text
// renders a page for a terminal of a given width (headings, wrapped
// paragraphs and lists, tables as columns or, when too wide, as one block
// a row; code blocks as they are); HTML renders it as a plain web page,
// and Handler serves the pages so, for the local region's console. Both
// renderers read the markdown these pages use (headings, paragraphs,
// nested lists, fenced code, pipe tables, code spans, emphasis, links,
// HTML comments and the details element), not all of CommonMark.
//
// A link from one page to another ([guarantees](guarantees.md)) stays a
// link on GitHub and in HTML, and reads "ferry help guarantees" on a
// terminal.
//
// Some pages hold sections that tests keep true, between markers: the
// state table of statemachine.md (statemachine/shape), the exit codes of
// exit-codes.md (client), the SCP and attack list of security.md and the
// example policies of pipeline.md (infra/stacks, infra/iam), the
// benchmark of performance.md (internal/proof/bench, make bench) and the
// code map of development.md (internal/proof/codestats).
package help
