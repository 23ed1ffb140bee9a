package console

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWants: a browser's GET of the root is the console's; an SDK's
// (signed, or with X-Amz-* headers, or not asking for HTML) is S3's
// ListBuckets; assets under Prefix are the console's whoever asks.
func TestWants(t *testing.T) {
	for _, tc := range []struct {
		name    string
		method  string
		path    string
		headers map[string]string
		want    bool
	}{
		{"browser root", "GET", "/", map[string]string{"Accept": "text/html,application/xhtml+xml"}, true},
		{"browser index", "GET", "/index.html", map[string]string{"Accept": "text/html"}, true},
		{"browser head", "HEAD", "/", map[string]string{"Accept": "text/html"}, true},
		{"sdk list buckets", "GET", "/", map[string]string{"Authorization": "AWS4-HMAC-SHA256 Credential=x", "X-Amz-Date": "20250101T000000Z"}, false},
		{"sdk unsigned with amz header", "GET", "/", map[string]string{"Accept": "text/html", "X-Amz-Content-Sha256": "UNSIGNED-PAYLOAD"}, false},
		{"presigned", "GET", "/?X-Amz-Signature=abc", map[string]string{"Accept": "text/html"}, false},
		{"curl", "GET", "/", map[string]string{"Accept": "*/*"}, false},
		{"asset", "GET", Prefix + "console.js", nil, true},
		{"post to root", "POST", "/", map[string]string{"Accept": "text/html"}, false},
		{"a bucket", "GET", "/ferry-deployer-111111111111-us-east-1", map[string]string{"Accept": "text/html"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, nil)
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			assert.Equal(t, tc.want, Wants(req))
		})
	}
}

// TestHandler: the page and its assets are served with a policy that
// forbids anything external, and with their content types; an unknown
// asset is 404. The page loads only the region's own assets.
func TestHandler(t *testing.T) {
	h := Handler()
	for _, tc := range []struct {
		path, status, contentType, contains string
	}{
		{"/", "200", "text/html", `<script src="/_ferry/console/console.js"`},
		{"/index.html", "200", "text/html", "ferry"},
		{"/", "200", "text/html", `<a id="help" href="` + HelpPath + `"`},
		{Prefix + "console.js", "200", "text/javascript", "/_ferry/history"},
		{Prefix + "console.css", "200", "text/css", "#graph"},
		{Prefix + "nope.js", "404", "", ""},
		{Prefix, "404", "", ""},
		{Prefix + "index.html", "404", "", ""},
	} {
		t.Run(tc.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
			res := rec.Result()
			body, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			assert.Equal(t, tc.status, strings.Fields(res.Status)[0])
			assert.Contains(t, res.Header.Get("Content-Security-Policy"), "default-src 'self'")
			if tc.status != "200" {
				return
			}
			assert.Contains(t, res.Header.Get("Content-Type"), tc.contentType)
			assert.Contains(t, string(body), tc.contains)
			assert.NotRegexp(t, `(src|href)="https?://`, string(body), "nothing fetched from outside")
		})
	}
}
