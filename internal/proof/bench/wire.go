package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go"

	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/local/sim"
)

// QueryPath is where a handler process (ServeHandler) calls the services
// of the simulated AWS it reaches in AWS's query protocol (query.go),
// with the SDK's own clients: the BaseEndpoint of each. As at AWS, the
// request's signature names the service (its credential scope) and its
// Version the API (Elastic Load Balancing's classic and v2 share a
// signing name), the signature's access key the session it acts as.
const QueryPath = "/_bench/query"

// What a handler process's HTTP client adds to each request to
// QueryPath, as no AWS request carries it: the account the client acts
// in (AWS knows it from the credentials) and the call's offset on its
// task's Timeline (package fanout), in nanoseconds. The answer carries
// spentHeader, the time the call spent there.
const (
	accountHeader = "X-Bench-Account"
	offsetHeader  = "X-Bench-Offset"
)

// queryService is a service served at QueryPath: the signing name and
// Version its requests carry, and the cloud.Clients field that answers.
type queryService struct {
	signing, version, client string
	// name is the SDK's service id.
	name string
}

// xmlns is the namespace of the service's answers.
func (s queryService) xmlns() string {
	return "http://" + s.signing + ".amazonaws.com/doc/" + s.version + "/"
}

// queryServices are the services a handler process calls in AWS's wire
// format; the others it calls with their input and output as JSON
// (AWSPath).
var queryServices = []queryService{
	{signing: "autoscaling", version: "2011-01-01", client: "AutoScaling", name: "Auto Scaling"},
	{signing: "elasticloadbalancing", version: "2012-06-01", client: "ELB", name: "Elastic Load Balancing"},
	{signing: "elasticloadbalancing", version: "2015-12-01", client: "ELBv2", name: "Elastic Load Balancing v2"},
}

// jsonServices are the services a handler process calls with their input
// and output as JSON (AWSPath): the clients of remote_clients.go.
var jsonServices = []string{"EC2", "IAM", "SNS", "CloudWatch", "EventBridge", "STS"}

// wireNames are the names of queryServices, for the report.
func wireNames() []string {
	names := make([]string, len(queryServices))
	for i, s := range queryServices {
		names[i] = s.name
	}
	return names
}

// andList is "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// serveSim serves world's simulated AWS to a handler process on mux: at
// QueryPath the services of queryServices, at AWSPath the others (STS as
// the principal caller).
func serveSim(mux *http.ServeMux, world *sim.World, caller string) *http.ServeMux {
	mux.Handle(AWSPath, serveAWS(world, caller))
	query := serveQuery(world)
	mux.Handle(QueryPath, query)
	mux.Handle(QueryPath+"/", query)
	return mux
}

// serveQuery answers the requests of the SDK's clients of queryServices
// from world, in AWS's query protocol: each call made with the clients
// the world builds for the account (accountHeader), the region and
// access key (the request's SigV4 signature) and session token
// (X-Amz-Security-Token), at its offset (offsetHeader). An error of the
// simulated AWS is AWS's ErrorResponse with its HTTP status; a call it
// could not send (no API error) drops the connection, as a timed-out
// request does.
func serveQuery(world *sim.World) http.Handler {
	var requests atomic.Uint64
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id := fmt.Sprintf("00000000-0000-4000-8000-%012x", requests.Add(1))
		ans, refused := queryCall(world, req)
		var b bytes.Buffer
		status, xmlns := http.StatusOK, ""
		if ans.svc != nil {
			xmlns = ans.svc.xmlns()
		}
		var apiErr smithy.APIError
		switch {
		case refused != nil:
			status = refused.status
			encodeError(&b, xmlns, id, refused.code, refused.msg, false)
		case ans.opErr != nil && !errors.As(ans.opErr, &apiErr):
			panic(http.ErrAbortHandler)
		case ans.opErr != nil:
			status = queryStatus(ans.opErr, apiErr)
			encodeError(&b, xmlns, id, apiErr.ErrorCode(), apiErr.ErrorMessage(), status >= 500)
		default:
			encodeResult(&b, req.PostForm.Get("Action"), xmlns, id, ans.out)
		}
		if refused == nil {
			w.Header().Set(spentHeader, strconv.FormatInt(int64(ans.spent), 10))
		}
		w.Header().Set("Content-Type", "text/xml")
		w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
		w.Header().Set("X-Amzn-Requestid", id)
		w.WriteHeader(status)
		_, _ = w.Write(b.Bytes())
	})
}

// queryAnswer is a call's answer: the service it was made to, and the
// operation's output or error, and the time it spent.
type queryAnswer struct {
	svc   *queryService
	out   any
	opErr error
	spent time.Duration
}

// queryRefusal is a request refused before the simulated AWS saw it: AWS's
// code and status for what is wrong with it.
type queryRefusal struct {
	status    int
	code, msg string
}

// queryCall makes the call req asks on world.
func queryCall(world *sim.World, req *http.Request) (queryAnswer, *queryRefusal) {
	var ans queryAnswer
	if req.Method != http.MethodPost {
		return ans, &queryRefusal{http.StatusMethodNotAllowed, "InvalidHttpRequest", "the query protocol is a POSTed form, not " + req.Method}
	}
	key, region, signing, ok := sigV4Scope(req.Header.Get("Authorization"))
	if !ok {
		return ans, &queryRefusal{http.StatusForbidden, "MissingAuthenticationToken", "Request is missing Authentication Token"}
	}
	if err := req.ParseForm(); err != nil {
		return ans, &queryRefusal{http.StatusBadRequest, "MalformedQueryString", err.Error()}
	}
	for i, s := range queryServices {
		if s.signing == signing && s.version == req.PostForm.Get("Version") {
			ans.svc = &queryServices[i]
		}
	}
	if ans.svc == nil {
		return ans, &queryRefusal{http.StatusBadRequest, "InvalidAction", fmt.Sprintf("no API %s of version %q here", signing, req.PostForm.Get("Version"))}
	}
	account := req.Header.Get(accountHeader)
	offset, err := strconv.ParseInt(req.Header.Get(offsetHeader), 10, 64)
	if account == "" || err != nil {
		return ans, &queryRefusal{http.StatusBadRequest, "MissingParameter", "a handler process's request names its account (" + accountHeader + ") and its offset (" + offsetHeader + ")"}
	}
	token := req.Header.Get("X-Amz-Security-Token")
	creds := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: key, SessionToken: token, Source: "SigV4"}, nil
	})
	c := simCall{client: ans.svc.client, op: req.PostForm.Get("Action"), account: account, region: region, creds: creds, offset: time.Duration(offset)}
	ans.out, ans.opErr, ans.spent, err = invoke(req.Context(), world, "", c, func(in any) error { return decodeForm(req.PostForm, in) })
	if err != nil {
		code := "ValidationError"
		if errors.Is(err, errNoOperation) {
			code = "InvalidAction"
		}
		return ans, &queryRefusal{http.StatusBadRequest, code, err.Error()}
	}
	return ans, nil
}

// sigV4Scope reads a SigV4 Authorization header's credential scope: the
// access key, the region and the service's signing name.
func sigV4Scope(authorization string) (key, region, service string, ok bool) {
	rest, found := strings.CutPrefix(authorization, "AWS4-HMAC-SHA256 ")
	if !found {
		return "", "", "", false
	}
	for _, part := range strings.Split(rest, ",") {
		if cred, found := strings.CutPrefix(strings.TrimSpace(part), "Credential="); found {
			f := strings.Split(cred, "/")
			if len(f) == 5 && f[4] == "aws4_request" && f[0] != "" {
				return f[0], f[2], f[3], true
			}
		}
	}
	return "", "", "", false
}

// queryStatus is the HTTP status of the operation's error opErr: the one
// the simulated AWS gave it, else 500 for a server's fault and 400 for the
// caller's.
func queryStatus(opErr error, apiErr smithy.APIError) int {
	if w := toWire(opErr); w.Status != 0 {
		return w.Status
	}
	if apiErr.ErrorFault() == smithy.FaultServer {
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

// queryClient is the HTTP client of a handler process's SDK clients of
// queryServices: it says on each request the account it acts in and the
// call's offset on its task's Timeline, and spends on the Timeline the
// time the answer says the call spent.
type queryClient struct {
	account string
	next    aws.HTTPClient
}

func (c queryClient) Do(req *http.Request) (*http.Response, error) {
	// The SDK closes a request's body once the answer's header is in; a
	// region that answers within microseconds can beat the transport's
	// last read of the body, which then drops the connection under the
	// answer being read (AWS answers too late for that). The transport
	// gets a copy of its own.
	if req.Body != nil && req.Body != http.NoBody {
		body, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	req.Header.Set(accountHeader, c.account)
	req.Header.Set(offsetHeader, strconv.FormatInt(int64(fanout.Offset(req.Context())), 10))
	resp, err := c.next.Do(req)
	if err != nil {
		return resp, err
	}
	if ns, perr := strconv.ParseInt(resp.Header.Get(spentHeader), 10, 64); perr == nil {
		fanout.Spend(req.Context(), time.Duration(ns))
	}
	return resp, nil
}
