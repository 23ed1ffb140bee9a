package help

import (
	"html"
	"net/http"
	"strconv"
	"strings"
)

// csp allows a help page nothing but its own inline style: no script, no
// image, no request anywhere.
const csp = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// style is the pages' whole look.
const style = `body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem;color:#222}
nav{font-size:14px;border-bottom:1px solid #ddd;padding-bottom:.5rem}
code{font:13px ui-monospace,monospace;background:#f3f3f3;padding:0 .2em}
pre{background:#f6f6f6;padding:.6rem;overflow-x:auto}pre code{background:none;padding:0}
table{border-collapse:collapse;margin:.5rem 0}th,td{border:1px solid #ddd;padding:.25rem .5rem;vertical-align:top;text-align:left}`

// Handler serves the reference as web pages, mounted with its prefix
// stripped (http.StripPrefix): "" is the list of topics, NAME a page
// rendered as HTML, NAME.md its markdown as it is. Links between pages
// are relative, so they work under any prefix; the navigation line links
// "/", the local region's console.
// Anything else is 404, and only GET and HEAD are answered.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "the help pages are read-only", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		name := strings.TrimPrefix(req.URL.Path, "/")
		if name == "" {
			h.Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(Index()))
			return
		}
		topic, raw := strings.CutSuffix(name, ".md")
		page, ok := Page(topic)
		switch {
		case !ok:
			http.Error(w, "no help page "+strconv.Quote(name)+": the list is at ./", http.StatusNotFound)
		case raw:
			h.Set("Content-Type", "text/markdown; charset=utf-8")
			_, _ = w.Write([]byte(page))
		default:
			h.Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(HTML(page)))
		}
	})
}

// Index is the list of topics as a web page, each linked (relatively)
// with its summary.
func Index() string {
	var b strings.Builder
	b.WriteString("<h1>ferry help</h1>\n<p>The reference, one page per topic (also <code>ferry help TOPIC</code>).</p>\n<table>\n")
	for _, t := range Topics {
		page, _ := Page(t.Name)
		b.WriteString("<tr><td><a href=\"" + t.Name + "\">" + html.EscapeString(t.Name) + "</a></td><td>" +
			html.EscapeString(Title(page)) + ": " + html.EscapeString(t.Summary) + "</td></tr>\n")
	}
	b.WriteString("</table>\n")
	return document("ferry help", b.String())
}

// HTML renders a page's markdown as a web page of its own: a navigation
// line (the console, the list of topics), then the page.
func HTML(markdown string) string {
	var b strings.Builder
	writeHTMLBlocks(&b, parse(markdown))
	return document(Title(markdown)+" - ferry help", b.String())
}

// document wraps body in a page titled title.
func document(title, body string) string {
	return "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html.EscapeString(title) +
		"</title><style>" + style + "</style></head>\n<body><nav><a href=\"/\">console</a> &middot; <a href=\"./\">help topics</a></nav>\n" +
		body + "</body></html>\n"
}

// writeHTMLBlocks writes blocks as HTML.
func writeHTMLBlocks(b *strings.Builder, blocks []block) {
	for _, bl := range blocks {
		switch bl.kind {
		case blockHeading:
			tag := "h" + strconv.Itoa(bl.level)
			b.WriteString("<" + tag + " id=\"" + anchor(plain(parseInline(bl.text))) + "\">" + inlineHTML(parseInline(bl.text)) + "</" + tag + ">\n")
		case blockCode:
			b.WriteString("<pre><code>" + html.EscapeString(strings.Join(bl.lines, "\n")) + "</code></pre>\n")
		case blockTable:
			writeHTMLTable(b, bl.rows)
		case blockList:
			writeHTMLList(b, bl)
		case blockHTML:
			b.WriteString(bl.text + "\n") // the pages' own markup (details), embedded at build time
		case blockImage:
			b.WriteString("<p><em>[image: " + html.EscapeString(bl.text) + "]</em></p>\n")
		default:
			b.WriteString("<p>" + inlineHTML(parseInline(bl.text)) + "</p>\n")
		}
	}
}

// writeHTMLList writes a list and its items' blocks.
func writeHTMLList(b *strings.Builder, bl block) {
	tag := "ul"
	if bl.ordered {
		tag = "ol"
	}
	b.WriteString("<" + tag + ">\n")
	for _, item := range bl.items {
		b.WriteString("<li>")
		if len(item) == 1 && item[0].kind == blockParagraph {
			b.WriteString(inlineHTML(parseInline(item[0].text)))
		} else {
			writeHTMLBlocks(b, item)
		}
		b.WriteString("</li>\n")
	}
	b.WriteString("</" + tag + ">\n")
}

// writeHTMLTable writes a table, its first row as the header.
func writeHTMLTable(b *strings.Builder, rows [][]string) {
	b.WriteString("<table>\n")
	for i, r := range rows {
		cell := "td"
		if i == 0 {
			cell = "th"
		}
		b.WriteString("<tr>")
		for _, c := range r {
			b.WriteString("<" + cell + ">" + inlineHTML(parseInline(c)) + "</" + cell + ">")
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
}

// inlineHTML is spans as HTML, every text escaped. A link to another page
// leads to that page here; a web address stays one; a path in the
// repository, which is not served, is shown as its text.
func inlineHTML(spans []span) string {
	var b strings.Builder
	for _, s := range spans {
		switch s.kind {
		case spanText:
			b.WriteString(html.EscapeString(s.text))
		case spanCode:
			b.WriteString("<code>" + html.EscapeString(s.text) + "</code>")
		case spanStrong:
			b.WriteString("<strong>" + inlineHTML(s.children) + "</strong>")
		case spanEm:
			b.WriteString("<em>" + inlineHTML(s.children) + "</em>")
		case spanLink:
			b.WriteString(linkHTML(s))
		}
	}
	return b.String()
}

// linkHTML is a link as HTML.
func linkHTML(s span) string {
	text := inlineHTML(s.children)
	href := ""
	if name, frag, ok := topicOf(s.url); ok {
		href = name
		if frag != "" {
			href += "#" + frag
		}
	} else if strings.HasPrefix(s.url, "https://") || strings.HasPrefix(s.url, "http://") || strings.HasPrefix(s.url, "#") {
		href = s.url
	}
	if href == "" {
		return text
	}
	return "<a href=\"" + html.EscapeString(href) + "\">" + text + "</a>"
}

// anchor is the id GitHub gives a heading: lower case, spaces as
// hyphens, punctuation dropped, so a page's links to #state-in-s3 work
// here as there.
func anchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}
