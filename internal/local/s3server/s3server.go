package s3server

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/local/s3server/s3mem"
	"github.com/ferryhq/ferry/internal/local/sameorigin"
)

// Region is the region the server claims and NewClient signs for.
const Region = "us-east-1"

// Options configure Start.
type Options struct {
	// Addr is the address to listen on; empty means 127.0.0.1:0 (any free
	// loopback port).
	Addr string
	// Clock is the server's time source (object LastModified, bucket
	// creation dates); nil means the system clock.
	Clock clock.Clock
	// Buckets are created before Start returns.
	Buckets []string
	// Versioned are buckets created before Start returns with versioning
	// enabled, as the deployer bucket is in AWS: every write keeps a new
	// version and a DeleteObject without a version id adds a delete
	// marker. A name in both lists is created once, versioned.
	Versioned []string
}

// Server is a running in-process S3-compatible server. It is safe for
// concurrent use.
type Server struct {
	handler  http.Handler
	fidelity *fidelity
	listener net.Listener
	http     *http.Server
	url      string

	closeOnce sync.Once
	closeErr  error
	served    chan struct{}
}

// Start creates the in-memory backend, creates opts.Buckets in it and
// serves it on opts.Addr. Close stops the server. A bucket name the backend
// refuses is an error, and nothing keeps running.
func Start(opts Options) (*Server, error) {
	clk := opts.Clock
	if clk == nil {
		clk = clock.System{}
	}
	ts := timeSource{clk: clk}
	backend := s3mem.New(s3mem.WithTimeSource(ts))
	for _, b := range opts.Buckets {
		if slices.Contains(opts.Versioned, b) {
			continue
		}
		if err := createBucket(backend, b, false); err != nil {
			return nil, err
		}
	}
	for _, b := range opts.Versioned {
		if err := createBucket(backend, b, true); err != nil {
			return nil, err
		}
	}
	faker := gofakes3.New(backend,
		gofakes3.WithTimeSource(ts),
		// Requests are signed with the wall clock while the server may run
		// on virtual time: never refuse a request as skewed.
		gofakes3.WithTimeSkewLimit(0),
	)
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("s3server: listen on %s: %w", addr, err)
	}
	f := newFidelity(faker.Server(), backend, ts.Now)
	s := &Server{
		// No web page the user opens may write it, read it (no CORS) or
		// have an object rendered as a page of its origin.
		handler:  sameorigin.Guard(sameorigin.Attachments(f)),
		fidelity: f,
		listener: ln,
		url:      "http://" + ln.Addr().String(),
		served:   make(chan struct{}),
	}
	s.http = &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.served)
		_ = s.http.Serve(ln) // returns http.ErrServerClosed after Close
	}()
	return s, nil
}

// createBucket creates bucket b in backend, with versioning enabled if
// versioned.
func createBucket(backend *s3mem.Backend, b string, versioned bool) error {
	if err := gofakes3.ValidateBucketName(b); err != nil {
		return fmt.Errorf("s3server: create bucket %q: %w", b, err)
	}
	if err := backend.CreateBucket(b); err != nil {
		return fmt.Errorf("s3server: create bucket %q: %w", b, err)
	}
	if versioned {
		cfg := gofakes3.VersioningConfiguration{Status: gofakes3.VersioningEnabled}
		if err := backend.SetVersioningConfiguration(b, cfg); err != nil {
			return fmt.Errorf("s3server: enable versioning of bucket %q: %w", b, err)
		}
	}
	return nil
}

// URL is the server's base URL, http://host:port, usable as an S3
// BaseEndpoint with path-style addressing.
func (s *Server) URL() string { return s.url }

// Handler is the S3 API as an http.Handler, for mounting in another server.
// It serves the same backend as URL.
func (s *Server) Handler() http.Handler { return s.handler }

// Client returns an SDK client for this server (see NewClient).
func (s *Server) Client() *s3.Client { return NewClient(s.url) }

// Close stops serving and closes open connections. Closing twice is not an
// error; the second call returns the first call's result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		err := s.http.Close()
		<-s.served
		if err != nil && !errors.Is(err, net.ErrClosed) {
			s.closeErr = fmt.Errorf("s3server: close: %w", err)
		}
	})
	return s.closeErr
}

// NewClient returns an S3 client for an S3-compatible endpoint such as this
// server: path-style addressing, static dummy credentials, region
// us-east-1, BaseEndpoint endpoint. It reads no environment or shared
// configuration. optFns adjust the options further (tests use them to turn
// off retries).
func NewClient(endpoint string, optFns ...func(*s3.Options)) *s3.Client {
	return s3.New(s3.Options{
		Region:       Region,
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider("ferry", "ferry-local-secret", ""),
		// The local server computes no flexible checksums of its own; only
		// send and check them when an operation requires it.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}, optFns...)
}

// timeSource adapts a clock.Clock to gofakes3's TimeSource. S3 reports
// times in GMT; the backend stores them as given and formats them in UTC.
type timeSource struct{ clk clock.Clock }

func (t timeSource) Now() time.Time                   { return t.clk.Now().UTC() }
func (t timeSource) Since(at time.Time) time.Duration { return t.clk.Now().Sub(at) }

var _ gofakes3.TimeSource = timeSource{}
