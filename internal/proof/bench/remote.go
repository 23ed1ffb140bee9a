package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/target"
)

// AWSPath is where a handler process (QuotaChild) calls the simulated
// AWS of the region that serves it: one JSON awsCall POSTed per call,
// answered with an awsAnswer.
const AWSPath = "/_bench/aws"

// awsCall is one call of the simulated AWS made from another process:
// the client (a field of cloud.Clients, or "STS": the deployer's Lambda
// role's STS) and its operation, the account-region it acts in and the
// credentials it signs with, its offset on its task's Timeline (package
// fanout: the simulation throttles calls at their moment), and the
// operation's input as JSON.
type awsCall struct {
	Client  string          `json:"client"`
	Op      string          `json:"op"`
	Account string          `json:"account,omitempty"`
	Region  string          `json:"region,omitempty"`
	Key     string          `json:"key,omitempty"`
	Secret  string          `json:"secret,omitempty"`
	Token   string          `json:"token,omitempty"`
	Offset  time.Duration   `json:"offset"`
	Input   json.RawMessage `json:"input"`
}

// awsAnswer is the answer to an awsCall: the output as JSON or the error,
// and the time the call spent on the Timeline (its modelled cost, and the
// backoff of its throttled attempts). On the wire its output (status 200)
// or its error (status operationFailed) is the body, as an SDK reads a
// response in one pass, and Spent the spentHeader.
type awsAnswer struct {
	Output json.RawMessage
	Err    *wireError
	Spent  time.Duration
}

// spentHeader carries an awsAnswer's Spent, in nanoseconds.
const spentHeader = "X-Bench-Spent"

// operationFailed is the status of an awsAnswer that carries the
// operation's error.
const operationFailed = http.StatusUnprocessableEntity

// wireError is an error of the simulated AWS as it crosses a process: the
// API error's code, message and fault, and the HTTP status the SDK's
// error carried; or, for an error that is no API error, its text.
type wireError struct {
	Code    string            `json:"code,omitempty"`
	Message string            `json:"message,omitempty"`
	Fault   smithy.ErrorFault `json:"fault,omitempty"`
	Status  int               `json:"status,omitempty"`
	Text    string            `json:"text,omitempty"`
}

// serveAWS serves AWSPath from world: each call made with a client the
// world builds for the call's account-region and credentials (or, for
// "STS", as the principal caller), on a Timeline at the call's offset.
func serveAWS(world *sim.World, caller string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var c awsCall
		if err := json.NewDecoder(req.Body).Decode(&c); err != nil {
			http.Error(w, "bench: not an AWS call: "+err.Error(), http.StatusBadRequest)
			return
		}
		ans, err := answer(req.Context(), world, caller, c)
		if err != nil {
			http.Error(w, "bench: "+err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set(spentHeader, strconv.FormatInt(int64(ans.Spent), 10))
		if ans.Err != nil {
			w.WriteHeader(operationFailed)
			_ = json.NewEncoder(w).Encode(ans.Err)
			return
		}
		_, _ = w.Write(ans.Output)
	})
}

// answer makes the call c on world.
func answer(ctx context.Context, world *sim.World, caller string, c awsCall) (*awsAnswer, error) {
	var creds aws.CredentialsProvider
	if c.Client != "STS" {
		creds = credentials.NewStaticCredentialsProvider(c.Key, c.Secret, c.Token)
	}
	sc := simCall{client: c.Client, op: c.Op, account: c.Account, region: c.Region, creds: creds, offset: c.Offset}
	out, opErr, spent, err := invoke(ctx, world, caller, sc, func(in any) error { return json.Unmarshal(c.Input, in) })
	if err != nil {
		return nil, err
	}
	ans := &awsAnswer{Spent: spent}
	if opErr != nil {
		ans.Err = toWire(opErr)
		return ans, nil
	}
	if ans.Output, err = json.Marshal(out); err != nil {
		return nil, fmt.Errorf("%s %s: the output: %w", c.Client, c.Op, err)
	}
	return ans, nil
}

// errNoOperation is invoke's error for an operation its client lacks.
var errNoOperation = errors.New("no operation")

// simCall is one call of the simulated AWS made from another process:
// the client (a field of cloud.Clients, or "STS": the deployer's Lambda
// role's STS, creds then unused) and its operation, the account-region
// it acts in, the credentials it signed with, and its offset on its
// task's Timeline.
type simCall struct {
	client, op, account, region string
	creds                       aws.CredentialsProvider
	offset                      time.Duration
}

// invoke makes the call c on world, its input filled by decode, on a
// Timeline at c's offset: the operation's output or its error (opErr),
// and the time it spent there (its modelled cost, and the backoff of its
// throttled attempts). err is a call the world cannot make: no such
// client or operation, or an input decode refused.
func invoke(ctx context.Context, world *sim.World, caller string, c simCall, decode func(in any) error) (out any, opErr error, spent time.Duration, err error) {
	var client reflect.Value
	if c.client == "STS" {
		client = reflect.ValueOf(world.STSAs(caller))
	} else {
		clients := world.Build(nil)(target.Target{AccountID: c.account, Region: c.region}, c.creds, nil)
		field := reflect.ValueOf(clients).Elem().FieldByName(c.client)
		if !field.IsValid() || field.Kind() != reflect.Interface || field.IsNil() {
			return nil, nil, 0, fmt.Errorf("no client %q", c.client)
		}
		client = field.Elem()
	}
	method := client.MethodByName(c.op)
	if !method.IsValid() || method.Type().NumIn() < 2 {
		return nil, nil, 0, fmt.Errorf("client %s: %w %q", c.client, errNoOperation, c.op)
	}
	in := reflect.New(method.Type().In(1).Elem())
	if err := decode(in.Interface()); err != nil {
		return nil, nil, 0, fmt.Errorf("%s %s: the input: %w", c.client, c.op, err)
	}
	ctx, tl := fanout.WithTimeline(ctx)
	fanout.Spend(ctx, c.offset)
	res := method.Call([]reflect.Value{reflect.ValueOf(ctx), in})
	spent = tl.Elapsed() - c.offset
	if opErr, _ := res[1].Interface().(error); opErr != nil {
		return nil, opErr, spent, nil
	}
	return res[0].Interface(), nil, spent, nil
}

// toWire is err as it crosses a process.
func toWire(err error) *wireError {
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		return &wireError{Text: err.Error()}
	}
	w := &wireError{Code: apiErr.ErrorCode(), Message: apiErr.ErrorMessage(), Fault: apiErr.ErrorFault()}
	var resp *smithyhttp.ResponseError
	if errors.As(err, &resp) {
		w.Status = resp.HTTPStatusCode()
	}
	return w
}

// fromWire is the error w stands for, wrapped as the SDK wraps an
// operation's error (as the simulation does).
func (w *wireError) fromWire(service, op string) error {
	var err error = errors.New(w.Text)
	if w.Code != "" {
		err = &smithy.GenericAPIError{Code: w.Code, Message: w.Message, Fault: w.Fault}
		if w.Status != 0 {
			err = &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
				Response: &smithyhttp.Response{Response: &http.Response{StatusCode: w.Status, Header: http.Header{}}},
				Err:      err,
			}}
		}
	}
	return &smithy.OperationError{ServiceID: service, OperationName: op, Err: err}
}

// remote is one client of the simulated AWS of another process (served
// by serveAWS at url + AWSPath): its calls cross over HTTP, as a Lambda's
// calls to AWS do, their time spent on the caller's Timeline.
type remote struct {
	http    *http.Client
	url     string
	client  string // the cloud.Clients field, or "STS"
	service string // the SDK's service id, for errors
	account string
	region  string
	creds   aws.CredentialsProvider
}

// call makes the operation op with in on r and decodes its output as O.
func call[O, I any](ctx context.Context, r remote, op string, in *I) (*O, error) {
	c := awsCall{Client: r.client, Op: op, Account: r.account, Region: r.region, Offset: fanout.Offset(ctx)}
	if r.creds != nil {
		creds, err := r.creds.Retrieve(ctx)
		if err != nil {
			return nil, &smithy.OperationError{ServiceID: r.service, OperationName: op, Err: fmt.Errorf("failed to retrieve credentials: %w", err)}
		}
		c.Key, c.Secret, c.Token = creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken
	}
	var err error
	if c.Input, err = json.Marshal(in); err != nil {
		return nil, err
	}
	out := new(O)
	spent, werr, err := r.post(ctx, c, out)
	if err != nil {
		return nil, &smithy.OperationError{ServiceID: r.service, OperationName: op, Err: &smithyhttp.RequestSendError{Err: err}}
	}
	fanout.Spend(ctx, spent)
	if werr != nil {
		return nil, werr.fromWire(r.service, op)
	}
	return out, nil
}

// post sends c and decodes its output into out, or its error; spent is
// the time the call spent.
func (r remote) post(ctx context.Context, c awsCall, out any) (spent time.Duration, werr *wireError, err error) {
	body, err := json.Marshal(c)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url+AWSPath, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case operationFailed:
		werr = &wireError{}
		out = werr
	default:
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return 0, nil, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	ns, err := strconv.ParseInt(resp.Header.Get(spentHeader), 10, 64)
	if err != nil {
		return 0, nil, fmt.Errorf("no %s: %w", spentHeader, err)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return 0, nil, err
	}
	return time.Duration(ns), werr, nil
}

// remoteBuild is a build function for cloud.NewConnector whose clients
// call the simulated AWS served at url, each signing with the deploy
// credentials it is given: the SDK's own clients of queryServices in
// AWS's wire format (QueryPath), the others with their input and output
// as JSON (AWSPath); assets makes the asset store of a target, an
// S3 client signing with the publish credentials.
func remoteBuild(hc *http.Client, url string, assets func(publish aws.CredentialsProvider) cloud.AssetStore) func(t target.Target, deploy, publish aws.CredentialsProvider) *cloud.Clients {
	return func(t target.Target, deploy, publish aws.CredentialsProvider) *cloud.Clients {
		r := func(client, service string) remote {
			return remote{http: hc, url: url, client: client, service: service, account: t.AccountID, region: t.Region, creds: deploy}
		}
		// The SDK's clients, as the Lambda builds them, but that they try
		// once: the simulated AWS models the retries of a throttled call
		// (sim.ThrottleModel).
		wire := cloud.AWSBuilder(aws.Config{Region: t.Region, BaseEndpoint: aws.String(url + QueryPath), HTTPClient: queryClient{account: t.AccountID, next: hc}},
			func(o *cloud.BuilderOptions) { o.MaxAttempts = 1 })(t, deploy, publish)
		return &cloud.Clients{
			Target:      t,
			EC2:         remoteEC2{r("EC2", "EC2")},
			AutoScaling: wire.AutoScaling,
			ELB:         wire.ELB,
			ELBv2:       wire.ELBv2,
			IAM:         remoteIAM{r("IAM", "IAM")},
			SNS:         remoteSNS{r("SNS", "SNS")},
			CloudWatch:  remoteCloudWatch{r("CloudWatch", "CloudWatch")},
			EventBridge: remoteEventBridge{r("EventBridge", "EventBridge")},
			Assets:      assets(publish),
		}
	}
}

// remoteSTSAt is the STS of the deployer's Lambda role served at url.
func remoteSTSAt(hc *http.Client, url string) cloud.STS {
	return remoteSTS{remote{http: hc, url: url, client: "STS", service: "STS"}}
}
