package region

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHTTPClientSendsBodies: HTTPClient sends a body from its own copy,
// so closing the caller's body once the response is in changes nothing,
// and the request is replayable.
func TestHTTPClientSendsBodies(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		got = append(got, string(b))
	}))
	defer srv.Close()
	for _, body := range []string{`{"a": 1}`, strings.Repeat("x", 10000)} {
		req, err := http.NewRequest(http.MethodPost, srv.URL, io.NopCloser(strings.NewReader(body)))
		require.NoError(t, err)
		req.ContentLength = int64(len(body))
		resp, err := HTTPClient().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	assert.Equal(t, []string{`{"a": 1}`, strings.Repeat("x", 10000)}, got)
}
