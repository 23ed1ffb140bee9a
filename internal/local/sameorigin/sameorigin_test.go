package sameorigin

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheck: only a request of the server's own origin, or of no browser
// page at all, passes (Fetch Standard: a browser sends Origin with every
// POST, PUT and DELETE, "null" for an opaque origin, and Sec-Fetch-Site
// with every request).
func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		name, origin, site string
		foreign            bool
	}{
		{"an SDK: no Origin, no Sec-Fetch-Site", "", "", false},
		{"the console", "http://127.0.0.1:4566", "same-origin", false},
		{"the console over https", "https://127.0.0.1:4566", "", false},
		{"a typed URL", "", "none", false},
		{"another site", "http://evil.example", "cross-site", true},
		{"another port of the same host", "http://127.0.0.1:3000", "same-site", true},
		{"an opaque origin", "null", "cross-site", true},
		{"not a URL", "%zz", "", true},
		{"another scheme", "file://127.0.0.1:4566", "", true},
		{"Sec-Fetch-Site without Origin", "", "cross-site", true},
		{"a same-site page that sent no Origin", "", "same-site", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPut, "http://127.0.0.1:4566/b/k", nil)
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			if tt.site != "" {
				req.Header.Set("Sec-Fetch-Site", tt.site)
			}
			err := Check(req)
			var foreign *ForeignError
			assert.Equal(t, tt.foreign, errors.As(err, &foreign), "%v", err)
		})
	}
}

// TestGuard: reads pass whatever their origin, writes of another origin
// and preflights are refused, and no CORS header is answered.
func TestGuard(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Allow-Methods", "PUT")
		_, _ = w.Write([]byte("served"))
	})
	for _, tt := range []struct {
		method, origin, preflight string
		status                    int
	}{
		{http.MethodGet, "http://evil.example", "", http.StatusOK},
		{http.MethodPut, "http://evil.example", "", http.StatusForbidden},
		{http.MethodPut, "http://example.com", "", http.StatusOK},
		{http.MethodPut, "", "", http.StatusOK},
		{http.MethodOptions, "http://evil.example", "PUT", http.StatusForbidden},
		{http.MethodOptions, "http://example.com", "PUT", http.StatusForbidden},
	} {
		req := httptest.NewRequest(tt.method, "http://example.com/b/k", nil)
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		if tt.preflight != "" {
			req.Header.Set("Access-Control-Request-Method", tt.preflight)
		}
		rec := httptest.NewRecorder()
		Guard(next).ServeHTTP(rec, req)
		assert.Equal(t, tt.status, rec.Code, "%s from %q", tt.method, tt.origin)
		for k := range rec.Header() {
			assert.NotContains(t, k, "Access-Control-", "%s from %q", tt.method, tt.origin)
		}
	}
}

func TestContentType(t *testing.T) {
	req := httptest.NewRequest(http.MethodPost, "/", nil)
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	require.NoError(t, ContentType(req, "application/json"))
	req.Header.Set("Content-Type", "text/plain")
	assert.EqualError(t, ContentType(req, "application/json"), `refused: the body's Content-Type is "text/plain", not application/json`)
	req.Header.Del("Content-Type")
	assert.Error(t, ContentType(req, "application/json"))
}

// TestAttachments: a GET's answer is an attachment whatever the handler
// set; other methods are left alone.
func TestAttachments(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Disposition", "inline")
		_, _ = w.Write([]byte("<script></script>"))
	})
	rec := httptest.NewRecorder()
	Attachments(next).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/b/k.html", nil))
	assert.Equal(t, "attachment", rec.Header().Get("Content-Disposition"))
	assert.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
	assert.Equal(t, "sandbox; default-src 'none'", rec.Header().Get("Content-Security-Policy"))
	rec = httptest.NewRecorder()
	Attachments(next).ServeHTTP(rec, httptest.NewRequest(http.MethodPut, "/b/k.html", nil))
	assert.Equal(t, "inline", rec.Header().Get("Content-Disposition"))
}
