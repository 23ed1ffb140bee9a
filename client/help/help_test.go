package help

import (
	"flag"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite client/help/testdata/*.golden")

// TestTopicsAreThePages: every markdown file of the folder is a topic and
// every topic a file, each with a title and a one-line summary.
func TestTopicsAreThePages(t *testing.T) {
	files, err := fs.Glob(pages, "*.md")
	require.NoError(t, err)
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(f, ".md"))
	}
	want := Names()
	slices.Sort(names)
	slices.Sort(want)
	assert.Equal(t, want, names, "Topics and the pages of client/help")
	for _, topic := range Topics {
		page, ok := Page(topic.Name)
		require.True(t, ok, topic.Name)
		assert.NotEmpty(t, Title(page), "%s.md starts with a # title", topic.Name)
		assert.NotEmpty(t, topic.Summary, topic.Name)
		assert.LessOrEqual(t, len(topic.Summary), 100, "%s: a summary is one line of ferry help", topic.Name)
	}
	_, ok := Page("nope")
	assert.False(t, ok)
}

// linkRe finds markdown links' targets.
var linkRe = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestLinksLead: every link of a page to another page names a topic and,
// with an anchor, one of that page's headings (as GitHub makes them);
// every link to a file of the repository names one that exists. The
// README's links to the pages are checked the same way.
func TestLinksLead(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	anchors := map[string][]string{}
	headings := func(name, text string) {
		for _, b := range parse(text) {
			if b.kind == blockHeading {
				anchors[name] = append(anchors[name], anchor(plain(parseInline(b.text))))
			}
		}
	}
	headings("README", string(readme))
	for _, name := range Names() {
		page, _ := Page(name)
		headings(name, page)
	}
	check := func(t *testing.T, from, dir, text string) {
		for _, m := range linkRe.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			if file == "" {
				assert.Contains(t, anchors[strings.TrimSuffix(from, ".md")], frag, "%s: #%s is no heading of it", from, frag)
				continue
			}
			path := filepath.Join(dir, filepath.FromSlash(file))
			_, err := os.Stat(path)
			assert.NoError(t, err, "%s links %s", from, target)
			if name, ok := strings.CutSuffix(filepath.Base(path), ".md"); ok && frag != "" && filepath.Base(filepath.Dir(path)) == "help" {
				assert.Contains(t, anchors[name], frag, "%s links %s: no such heading", from, target)
			}
		}
	}
	for _, name := range Names() {
		page, _ := Page(name)
		check(t, name+".md", ".", page)
	}
	check(t, "README.md", filepath.Join("..", ".."), string(readme))
}

// TestREADMEListsTheTopics: the README's "Read more" table is Topics, in
// order, each linked to its page, with its summary.
func TestREADMEListsTheTopics(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## Read more\n")
	require.True(t, ok, "the README has a Read more section")
	var want []string
	for _, topic := range Topics {
		want = append(want, "| ["+topic.Name+"](client/help/"+topic.Name+".md) | "+topic.Summary+" |")
	}
	var rows []string
	for _, l := range strings.Split(section, "\n") {
		if strings.HasPrefix(l, "| [") {
			rows = append(rows, l)
		}
		if strings.HasPrefix(l, "## ") {
			break
		}
	}
	assert.Equal(t, want, rows, "paste these rows into the README's Read more table")
}

// TestREADMEStaysShort: the README is read top to bottom, so it stays at
// most 25 KB with no line over 400 characters; detail goes to the pages.
func TestREADMEStaysShort(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	assert.LessOrEqual(t, len(readme), 25_000, "README.md: move detail into a page of client/help")
	for i, l := range strings.Split(string(readme), "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(l), 400, "README.md line %d", i+1)
	}
}

// TestTextFitsTheWidth: every page laid out for 80 and for 60 columns has
// no line wider than that but the lines of its code blocks, which are kept
// as they are, whole, and a word wider than a line, alone on its own.
func TestTextFitsTheWidth(t *testing.T) {
	for _, name := range append(Names(), "testdata/sample") {
		page := pageOrFile(t, name)
		code := codeLines(parse(page))
		for _, width := range []int{80, 60} {
			out := Text(page, width)
			for _, l := range strings.Split(out, "\n") {
				if utf8.RuneCountInString(l) > width {
					trimmed := strings.TrimSpace(l)
					assert.True(t, code[trimmed] || !strings.Contains(trimmed, " "), "%s at %d columns: a line of %d: %q", name, width, utf8.RuneCountInString(l), l)
				}
			}
			for c := range code {
				assert.Contains(t, out, c, "%s at %d: a code line kept whole", name, width)
			}
			assert.NotContains(t, out, "<!--", name)
			assert.NotContains(t, out, "](", "%s: no markdown link left", name)
		}
	}
}

// pageOrFile is a topic's page, or a file of this folder.
func pageOrFile(t *testing.T, name string) string {
	if page, ok := Page(name); ok {
		return page
	}
	b, err := os.ReadFile(name + ".md")
	require.NoError(t, err)
	return string(b)
}

// codeLines are the lines of every code block in blocks, trimmed.
func codeLines(blocks []block) map[string]bool {
	out := map[string]bool{}
	for _, b := range blocks {
		for _, l := range b.lines {
			if strings.TrimSpace(l) != "" {
				out[strings.TrimSpace(l)] = true
			}
		}
		for _, item := range b.items {
			for l := range codeLines(item) {
				out[l] = true
			}
		}
	}
	return out
}

// TestRenderGolden: the sample page, as text at 60 columns and as HTML
// (testdata/*.golden; go test ./client/help -update rewrites them).
func TestRenderGolden(t *testing.T) {
	sample, err := os.ReadFile(filepath.Join("testdata", "sample.md"))
	require.NoError(t, err)
	for file, got := range map[string]string{
		"sample.txt.golden":  Text(string(sample), 60),
		"sample.html.golden": HTML(string(sample)),
	} {
		path := filepath.Join("testdata", file)
		if *update {
			require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, string(want), got, "%s: run go test ./client/help -update", file)
	}
}

// TestHandler: the list of topics at the root, each page as HTML at its
// name and as markdown at NAME.md, with a policy that allows no script
// and nothing external; 404 for what is no page, 405 for a write.
func TestHandler(t *testing.T) {
	srv := httptest.NewServer(http.StripPrefix("/_ferry/help/", Handler()))
	t.Cleanup(srv.Close)
	guarantees, _ := Page("guarantees")
	for _, tc := range []struct {
		method, path string
		status       int
		contentType  string
		contains     []string
	}{
		{"GET", "/_ferry/help/", 200, "text/html", []string{`<a href="release">release</a>`, `<a href="development">`, "Guarantees and limits: what a deploy promises"}},
		{"GET", "/_ferry/help/guarantees", 200, "text/html", []string{`<h1 id="guarantees-and-limits">Guarantees and limits</h1>`, `<a href="/">console</a>`, `<a href="./">help topics</a>`, `<a href="development#reliability">`}},
		{"GET", "/_ferry/help/statemachine", 200, "text/html", []string{"<th>State</th>", "&lt;project&gt;/&lt;config&gt;", `<h2 id="state-in-s3">`}},
		{"GET", "/_ferry/help/guarantees.md", 200, "text/markdown", []string{guarantees}},
		{"HEAD", "/_ferry/help/release", 200, "text/html", nil},
		{"GET", "/_ferry/help/nope", 404, "", []string{`no help page "nope"`}},
		{"GET", "/_ferry/help/guarantees/x", 404, "", nil},
		{"POST", "/_ferry/help/guarantees", 405, "", nil},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, nil)
			require.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			assert.Equal(t, tc.status, resp.StatusCode)
			if tc.status != 200 {
				return
			}
			assert.Contains(t, resp.Header.Get("Content-Type"), tc.contentType)
			assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'none'")
			assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
			for _, c := range tc.contains {
				assert.Contains(t, string(body), c)
			}
			assert.NotContains(t, string(body), "<script", "no script")
			assert.NotRegexp(t, `(src|href)="https?://`, string(body), "nothing fetched from outside")
		})
	}
}

// TestInline: the inline markdown the pages use, and what is not markdown
// left as text.
func TestInline(t *testing.T) {
	tests := []struct {
		in, text, html string
	}{
		{"a `b*c*` d", "a b*c* d", "a <code>b*c*</code> d"},
		{"**bold `x`**", "bold x", "<strong>bold <code>x</code></strong>"},
		{"*em* and 2*3*4", "em and 2*3*4", "<em>em</em> and 2*3*4"},
		{"`?*/?*` and arn:aws:iam::*:role", "?*/?* and arn:aws:iam::*:role", "<code>?*/?*</code> and arn:aws:iam::*:role"},
		{"[guarantees](guarantees.md)", "'ferry help guarantees'", `<a href="guarantees">guarantees</a>`},
		{"[the proof](security.md#the-proof)", "the proof ('ferry help security')", `<a href="security#the-proof">the proof</a>`},
		{"[go.dev](https://go.dev)", "go.dev (https://go.dev)", `<a href="https://go.dev">go.dev</a>`},
		{"[limits](../../internal/limits)", "limits", "limits"},
		{"``a ` b``", "a ` b", "<code>a ` b</code>"},
		{"an [unclosed link", "an [unclosed link", "an [unclosed link"},
		{"<tag> & `<code>`", "<tag> & <code>", "&lt;tag&gt; &amp; <code>&lt;code&gt;</code>"},
		{`a \| b`, "a | b", "a | b"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.text, plain(parseInline(tt.in)))
			assert.Equal(t, tt.html, inlineHTML(parseInline(tt.in)))
		})
	}
}

// TestSplitRow: a pipe in a code span or escaped is the cell's.
func TestSplitRow(t *testing.T) {
	assert.Equal(t, []string{"a", "`x|y`", "b|c", ""}, splitRow("| a | `x|y` | b\\|c | |"))
}

// FuzzText: any text renders without a panic, as text within the width
// but for code and words wider than it, and as HTML.
func FuzzText(f *testing.F) {
	sample, err := os.ReadFile(filepath.Join("testdata", "sample.md"))
	require.NoError(f, err)
	for _, s := range []string{string(sample), "- a\n  - b\n\n  c\n", "|a|\n|-|\n", "```\nx", "1. x\n   ```\n   y\n", "**", "[a](", "`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = Text(s, 60)
		_ = HTML(s)
	})
}
