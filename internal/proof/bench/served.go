package bench

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// servedHeader carries, on every answer of the region to a handler
// process (serveRegion), how long the region took to answer, in
// nanoseconds: from the request read to the answer's header written.
const servedHeader = "X-Bench-Served"

// timeServed sets servedHeader on every answer of next.
func timeServed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		next.ServeHTTP(&servedWriter{ResponseWriter: w, began: time.Now()}, req)
	})
}

// servedWriter sets servedHeader when the answer's header is written.
type servedWriter struct {
	http.ResponseWriter
	began   time.Time
	written bool
}

func (s *servedWriter) WriteHeader(code int) {
	if !s.written {
		s.written = true
		s.Header().Set(servedHeader, strconv.FormatInt(int64(time.Since(s.began)), 10))
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *servedWriter) Write(b []byte) (int, error) {
	if !s.written {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

// waits records, in a handler process, the time it waited for the
// region's answers: for each answer, the servedHeader long span ending
// when its header arrived. That time is the simulated AWS's, S3's and
// Step Functions' (AWS's side on a Lambda, where the call's latency is
// the modelled CallCost), not the handler's.
type waits struct {
	mu    sync.Mutex
	spans [][2]time.Time
}

// RoundTrip sends req with next and records its answer's span.
func (w *waits) roundTrip(next http.RoundTripper, req *http.Request) (*http.Response, error) {
	resp, err := next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if ns, perr := strconv.ParseInt(resp.Header.Get(servedHeader), 10, 64); perr == nil && ns > 0 {
		end := time.Now()
		w.mu.Lock()
		w.spans = append(w.spans, [2]time.Time{end.Add(-time.Duration(ns)), end})
		w.mu.Unlock()
	}
	return resp, nil
}

// take returns the time the spans recorded since the last take cover,
// spans side by side counted once, and forgets them.
func (w *waits) take() time.Duration {
	w.mu.Lock()
	spans := w.spans
	w.spans = nil
	w.mu.Unlock()
	return covered(spans)
}

// covered is the time the union of spans covers.
func covered(spans [][2]time.Time) time.Duration {
	slices.SortFunc(spans, func(a, b [2]time.Time) int { return a[0].Compare(b[0]) })
	var total time.Duration
	var end time.Time
	for _, s := range spans {
		if s[0].Before(end) {
			s[0] = end
		}
		if s[1].After(s[0]) {
			total += s[1].Sub(s[0])
			end = s[1]
		}
	}
	return total
}

// waitingTransport is an http.RoundTripper that records its answers'
// spans in w.
type waitingTransport struct {
	w    *waits
	next http.RoundTripper
}

func (t waitingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.w.roundTrip(t.next, req)
}

// bodyTransport sends each request's body to next through Read alone.
//
// The SDK (smithy-go's Request.Build) wraps a body in a closer whose
// WriteTo answers io.EOF once closed, and closes it as soon as Do
// returns, that is once the response's headers are in. net/http, having
// sent a body of known length, reads it once more to see that it ends; if
// that read is a WriteTo after the close, the io.EOF is an error to it,
// and it closes the connection under the response the SDK is still
// reading ("use of closed network connection"). On loopback a server can
// answer before that last read, so a call tried once failed about once
// in 300. Through Read alone, a closed body ends the way net/http
// expects.
type bodyTransport struct{ next http.RoundTripper }

func (t bodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return t.next.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.Body = readCloser{req.Body}
	return t.next.RoundTrip(r)
}

// readCloser is an io.ReadCloser that is nothing else: not an
// io.WriterTo.
type readCloser struct{ io.ReadCloser }
