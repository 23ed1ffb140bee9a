package region

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/local/s3server"
)

// evil is the origin of a web page the region's user happens to open.
const evil = "http://evil.example"

// browserRequest is a request as a browser sends it from a page of
// origin (none: the header is left out) with contentType and body.
func browserRequest(t *testing.T, method, url, origin, contentType string, body []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req
}

func do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

// uploadForm is an HTML form's POST Object upload of an HTML page to
// bucket: what any web page can make a browser send.
func uploadForm(t *testing.T, key string) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	require.NoError(t, mw.WriteField("key", key))
	require.NoError(t, mw.WriteField("Content-Type", "text/html"))
	fw, err := mw.CreateFormFile("file", "x.html")
	require.NoError(t, err)
	_, _ = fw.Write([]byte("<script>fetch('/', {method: 'POST'})</script>"))
	require.NoError(t, mw.Close())
	return mw.FormDataContentType(), b.Bytes()
}

// TestBrowserAttacksAreRefused: a web page of another origin can change
// nothing in the local region (package sameorigin): each request is what
// a page can make a browser send, and each is refused with 403 and a
// message saying why, before it changes anything.
func TestBrowserAttacksAreRefused(t *testing.T) {
	r, _ := newTestRegion(t, Options{})
	srv := httptest.NewServer(r.Handler())
	t.Cleanup(srv.Close)
	bucket := r.Info().Bucket
	formType, form := uploadForm(t, "x.html")
	sfnOp := func(origin, op string) *http.Request {
		req := browserRequest(t, http.MethodPost, srv.URL+"/", origin, jsonContentType, []byte("{}"))
		req.Header.Set("X-Amz-Target", sfnTargetPrefix+op)
		return req
	}
	setCapacity := []byte(`{"action": "set-capacity", "group": "coinbase/deploy-test/development/web/r1", "Desired": 0}`)
	preflight := browserRequest(t, http.MethodOptions, srv.URL+"/"+bucket+"/x.html", evil, "", nil)
	preflight.Header.Set("Access-Control-Request-Method", "PUT")
	crossSite := browserRequest(t, http.MethodPut, srv.URL+"/"+bucket+"/x.html", "", "text/html", []byte("<p>"))
	crossSite.Header.Set("Sec-Fetch-Site", "cross-site")

	for _, tt := range []struct {
		name, want string
		req        *http.Request
	}{
		{"a page PUTs an object", "another origin (" + evil + ")",
			browserRequest(t, http.MethodPut, srv.URL+"/"+bucket+"/x.html", evil, "text/html", []byte("<p>"))},
		{"a page DELETEs an object", "another origin",
			browserRequest(t, http.MethodDelete, srv.URL+"/"+bucket+"/x.html", evil, "", nil)},
		{"a page's form uploads an HTML object", "another origin",
			browserRequest(t, http.MethodPost, srv.URL+"/"+bucket, evil, formType, form)},
		{"a form upload without Origin", "no POST uploads",
			browserRequest(t, http.MethodPost, srv.URL+"/"+bucket, "", formType, form)},
		{"a sandboxed page (Origin: null) PUTs an object", "another origin (null)",
			browserRequest(t, http.MethodPut, srv.URL+"/"+bucket+"/x.html", "null", "text/html", []byte("<p>"))},
		{"a page sends Sec-Fetch-Site: cross-site and no Origin", "cross-site", crossSite},
		{"a page calls the Step Functions API", "another origin", sfnOp(evil, "ListStateMachines")},
		{"a page of another port of the same host calls the Step Functions API", "another origin",
			sfnOp("http://127.0.0.1:1", "ListStateMachines")},
		{"a page scales a group to 0 (POST /_ferry/world, text/plain)", "another origin",
			browserRequest(t, http.MethodPost, srv.URL+WorldPath, evil, "text/plain", setCapacity)},
		{"a page asks for CORS", "no cross-origin request", preflight},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := do(t, tt.req)
			assert.Equal(t, http.StatusForbidden, resp.StatusCode, body)
			assert.Contains(t, body, tt.want)
			assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
		})
	}
	_, err := r.S3().HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("x.html")})
	assert.Error(t, err, "nothing was stored")
}

// TestJSONEndpointsTakeOnlyJSON: the Step Functions API and POST
// /_ferry/world refuse a body of any other media type (a page can send
// text/plain without a CORS preflight), even without an Origin.
func TestJSONEndpointsTakeOnlyJSON(t *testing.T) {
	r, _ := newTestRegion(t, Options{})
	srv := httptest.NewServer(r.Handler())
	t.Cleanup(srv.Close)

	req := browserRequest(t, http.MethodPost, srv.URL+"/", "", "text/plain", []byte("{}"))
	req.Header.Set("X-Amz-Target", sfnTargetPrefix+"ListStateMachines")
	resp, body := do(t, req)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, body, CodeSerialization)
	assert.Contains(t, body, `Content-Type is \"text/plain\", not application/x-amz-json-1.0`)

	resp, body = do(t, browserRequest(t, http.MethodPost, srv.URL+WorldPath, "", "text/plain",
		[]byte(`{"action": "set-capacity", "group": "nope", "Desired": 0}`)))
	assert.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode)
	assert.Contains(t, body, `Content-Type is \"text/plain\", not application/json`)
}

// TestConsoleAndSDKStillWork: the console (same origin) and clients that
// send no Origin (the SDKs) are served.
func TestConsoleAndSDKStillWork(t *testing.T) {
	r, _ := newTestRegion(t, Options{})
	srv := httptest.NewServer(r.Handler())
	t.Cleanup(srv.Close)
	for _, origin := range []string{srv.URL, ""} {
		req := browserRequest(t, http.MethodPost, srv.URL+"/", origin, jsonContentType, []byte("{}"))
		req.Header.Set("X-Amz-Target", sfnTargetPrefix+"ListStateMachines")
		if origin != "" {
			req.Header.Set("Sec-Fetch-Site", "same-origin")
		}
		resp, body := do(t, req)
		assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	}
	c := s3server.NewClient(srv.URL)
	_, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(r.Info().Bucket), Key: aws.String("sdk.txt"),
		Body: strings.NewReader("hello")})
	require.NoError(t, err, "the SDK's PutObject sends no Origin")
}

// TestObjectsAreNotPages: an HTML object (stored by the SDK) is served as
// an attachment that cannot run as a page of the console's origin, with
// no CORS header, whatever Content-Type and Content-Disposition it was
// stored with.
func TestObjectsAreNotPages(t *testing.T) {
	r, _ := newTestRegion(t, Options{})
	srv := httptest.NewServer(r.Handler())
	t.Cleanup(srv.Close)
	bucket := r.Info().Bucket
	_, err := s3server.NewClient(srv.URL).PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String("page.html"), ContentType: aws.String("text/html"),
		ContentDisposition: aws.String("inline"), Body: strings.NewReader("<script>alert(1)</script>"),
	})
	require.NoError(t, err)
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		req := browserRequest(t, method, srv.URL+"/"+bucket+"/page.html", evil, "", nil)
		req.Header.Set("Accept", "text/html")
		resp, _ := do(t, req)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "attachment", resp.Header.Get("Content-Disposition"), method)
		assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"), method)
		assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "sandbox", method)
		assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"), method)
	}
	var info Info
	resp, body := do(t, browserRequest(t, http.MethodGet, srv.URL+InfoPath, "", "", nil))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, json.Unmarshal([]byte(body), &info), "the region's own views are not attachments")
}
