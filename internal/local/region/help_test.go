package region

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/local/console"
)

// TestHelpPages: the region serves Options.Help under the path the
// console's header links, with that prefix stripped; the path without its
// slash redirects there; a region without pages answers 404, as it does
// for a path that only begins like it. Help sees GET only: the region
// refuses other methods from other origins before (sameorigin), and Help
// answers the rest itself.
func TestHelpPages(t *testing.T) {
	pages := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.WriteString(w, req.Method+" ["+req.URL.Path+"]")
	})
	r, _ := newTestRegion(t, Options{Help: pages})
	srv := httptest.NewServer(r.Handler())
	t.Cleanup(srv.Close)
	get := func(t *testing.T, url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	for path, want := range map[string]string{
		console.HelpPath:                "GET []",
		console.HelpPath + "guarantees": "GET [guarantees]",
		console.HelpPath + "release.md": "GET [release.md]",
		"/_ferry/help":                  "GET []", // redirected
	} {
		code, body := get(t, srv.URL+path)
		assert.Equal(t, http.StatusOK, code, path)
		assert.Equal(t, want, body, path)
	}
	code, _ := get(t, srv.URL+"/_ferry/helpx")
	assert.Equal(t, http.StatusNotFound, code, "not under the help path")

	bare, _ := newTestRegion(t, Options{})
	srv2 := httptest.NewServer(bare.Handler())
	t.Cleanup(srv2.Close)
	code, body := get(t, srv2.URL+console.HelpPath+"guarantees")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Contains(t, body, "serves no help pages")
}
