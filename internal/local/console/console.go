package console

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// Prefix is where the console's assets are served. No S3 bucket can be
// named with an underscore, so it never shadows one.
const Prefix = "/_ferry/console/"

// HelpPath is where the region serves the reference's pages (package
// client/help, given to the region by ferry local), linked from the
// page's header. Like Prefix, it shadows no bucket.
const HelpPath = "/_ferry/help/"

// csp allows the page only what the region serves itself.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

//go:embed static
var static embed.FS

// Wants reports whether req asks for the console: a GET or HEAD of the
// root (or of the page) by a browser, which sends no AWS signature or
// X-Amz-* header and accepts HTML, or of an asset under Prefix. Anything
// else at the root (an SDK's ListBuckets) is not the console's.
func Wants(req *http.Request) bool {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return false
	}
	if strings.HasPrefix(req.URL.Path, Prefix) {
		return true
	}
	if req.URL.Path != "/" && req.URL.Path != "/index.html" {
		return false
	}
	if req.Header.Get("Authorization") != "" || req.URL.Query().Has("X-Amz-Signature") {
		return false
	}
	for k := range req.Header {
		if strings.HasPrefix(strings.ToLower(k), "x-amz-") {
			return false
		}
	}
	return strings.Contains(req.Header.Get("Accept"), "text/html")
}

// Handler serves the console: the page at the root, its assets under
// Prefix, each with a Content-Security-Policy that forbids anything
// external. An unknown asset is 404.
func Handler() http.Handler {
	assets, err := fs.Sub(static, "static")
	if err != nil {
		panic("console: " + err.Error()) // the embedded tree is fixed at build time
	}
	files := http.FileServerFS(assets)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		r := req.Clone(req.Context())
		switch {
		case req.URL.Path == "/" || req.URL.Path == "/index.html":
			r.URL.Path = "/"
		case strings.HasPrefix(req.URL.Path, Prefix) && strings.TrimPrefix(req.URL.Path, Prefix) != "" && req.URL.Path != Prefix+"index.html":
			r.URL.Path = "/" + strings.TrimPrefix(req.URL.Path, Prefix)
		default:
			http.NotFound(w, req)
			return
		}
		files.ServeHTTP(w, r)
	})
}
