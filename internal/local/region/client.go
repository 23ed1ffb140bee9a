package region

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/ferryhq/ferry/internal/identity"
)

// maxBufferedBody is the largest request body HTTPClient buffers; larger
// ones are sent as they are.
const maxBufferedBody = 8 << 20

// HTTPClient returns an HTTP client for AWS SDK clients pointed at a local
// region (sfn.Options.HTTPClient, s3.Options.HTTPClient). It sends every
// request body of up to 8 MiB from a private in-memory copy.
//
// Why: the SDK (smithy-go) closes a request's body as soon as the response
// headers arrive, and its body's WriteTo then returns io.EOF. net/http
// writes a body that is not a known in-memory reader straight to the
// connection and afterwards checks it for extra bytes; when the server
// answers before that check (a server on the same machine does, in
// microseconds), the check fails with EOF and net/http closes the
// connection under the response being read: "use of closed network
// connection". With a private copy the SDK's close cannot reach the body
// net/http reads. Against AWS the latency hides the race; the client is
// harmless there too.
func HTTPClient() *http.Client {
	return &http.Client{Transport: bufferedBodies{next: http.DefaultTransport.(*http.Transport).Clone()}}
}

// bufferedBodies is a RoundTripper that sends small request bodies from a
// private copy.
type bufferedBodies struct{ next http.RoundTripper }

func (b bufferedBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody || req.ContentLength <= 0 || req.ContentLength > maxBufferedBody {
		return b.next.RoundTrip(req)
	}
	data, err := io.ReadAll(io.LimitReader(req.Body, req.ContentLength))
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(data))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	out.ContentLength = int64(len(data))
	return b.next.RoundTrip(out)
}

// inProcessEndpoint is the endpoint of the region's in-process clients:
// their requests never leave the process, whatever the URL says.
const inProcessEndpoint = "http://region.local"

// SFN returns a Step Functions client of the region that calls its API in
// process, through the same handler as `ferry local`'s listener, without
// a socket: the deployer's own client, which confirms each task's
// execution (deployer.Executions) as the Lambda does on AWS.
func (r *Region) SFN() *sfn.Client {
	return sfn.NewFromConfig(r.inProcessConfig())
}

// Signer makes identity proofs as the region's one local caller, signed
// at the region's time and naming its in-process endpoint: what in-process
// callers (the benchmark, the reliability matrix) submit releases with.
func (r *Region) Signer() identity.Signer {
	return identity.Signer{
		Credentials: credentials.NewStaticCredentialsProvider(localAccessKey, localSecret, ""),
		Region:      r.info.Region, Endpoint: inProcessEndpoint, Clock: r.clk,
	}
}

// inProcessConfig is the AWS configuration of the region's in-process
// clients.
func (r *Region) inProcessConfig() aws.Config {
	return aws.Config{
		Region:       r.info.Region,
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: aws.String(inProcessEndpoint),
		HTTPClient:   r.inProcessClient(),
	}
}

// verifier is the deployer's identity.Verifier in the region: it replays
// proofs in process, so it accepts a proof naming any URL (the client's
// names the region's listener) without ever calling that URL.
func (r *Region) verifier() identity.Verifier {
	return identity.Verifier{Client: r.inProcessClient(), Endpoint: func(*url.URL) bool { return true }}
}

// inProcessClient is an HTTP client whose requests r.Handler() serves.
func (r *Region) inProcessClient() *http.Client {
	return &http.Client{Transport: inProcess{handler: r.Handler()}}
}

// inProcess is a RoundTripper that serves each request with a handler of
// the same process.
type inProcess struct{ handler http.Handler }

func (p inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	p.handler.ServeHTTP(rec, req)
	return rec.Result(), nil
}
