package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/target"
)

// wireConfig is an SDK configuration for the query services served at
// url, trying each call once.
func wireConfig(hc aws.HTTPClient, url string) aws.Config {
	return aws.Config{
		Region:       Region,
		Credentials:  credentials.NewStaticCredentialsProvider("AKIAEXAMPLE", "secret", "token"),
		BaseEndpoint: aws.String(url),
		HTTPClient:   hc,
		Retryer:      func() aws.Retryer { return aws.NopRetryer{} },
	}
}

// sdkClient is srv's client, its bodies sent as ServeHandler sends
// them (bodyTransport).
func sdkClient(srv *httptest.Server) *http.Client {
	return &http.Client{Transport: bodyTransport{srv.Client().Transport}}
}

// wireOps are the operations of package cloud's interfaces served in the
// query protocol: each interface and the SDK's client that implements
// it.
func wireOps(cfg aws.Config) []struct {
	api    reflect.Type
	client any
} {
	return []struct {
		api    reflect.Type
		client any
	}{
		{reflect.TypeFor[cloud.AutoScaling](), autoscaling.NewFromConfig(cfg)},
		{reflect.TypeFor[cloud.ELB](), elb.NewFromConfig(cfg)},
		{reflect.TypeFor[cloud.ELBv2](), elbv2.NewFromConfig(cfg)},
	}
}

// TestQueryRoundTrip: for every Auto Scaling and Elastic Load Balancing
// operation the deployer uses (package cloud's interfaces), the SDK's own
// client's request, decoded by decodeForm, is the input it was given,
// every member set (lists of two, and empty lists: "Names="), and an
// output with every member set, encoded by encodeResult, is what the
// SDK's own deserializer reads back. A member named on the wire other
// than by its Go name (queryNames), an XML text not escaped, a timestamp
// not in ISO 8601, an empty list lost: each fails here.
func TestQueryRoundTrip(t *testing.T) {
	var mu sync.Mutex
	var out any
	var got reflect.Value
	var decodeErr error
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if decodeErr = req.ParseForm(); decodeErr == nil {
			decodeErr = decodeForm(req.PostForm, got.Interface())
		}
		var b bytes.Buffer
		encodeResult(&b, req.PostForm.Get("Action"), "http://example/", "req-1", out)
		_, _ = w.Write(b.Bytes())
	}))
	defer srv.Close()
	for _, items := range []int{2, 0} {
		for _, svc := range wireOps(wireConfig(sdkClient(srv), srv.URL)) {
			for i := range svc.api.NumMethod() {
				op := svc.api.Method(i)
				t.Run(fmt.Sprintf("%s/%s/items=%d", svc.api.Name(), op.Name, items), func(t *testing.T) {
					method := reflect.ValueOf(svc.client).MethodByName(op.Name)
					in := reflect.New(op.Type.In(1).Elem())
					fill(in.Elem(), items, new(int), 0)
					want := reflect.New(op.Type.Out(0).Elem())
					fill(want.Elem(), items, new(int), 0)
					mu.Lock()
					out, got = want.Interface(), reflect.New(in.Type().Elem())
					mu.Unlock()

					res := method.Call([]reflect.Value{reflect.ValueOf(context.Background()), in})
					require.Nil(t, res[1].Interface(), "the SDK read the answer")
					mu.Lock()
					defer mu.Unlock()
					require.NoError(t, decodeErr)
					assert.Equal(t, in.Interface(), got.Interface(), "the request decoded is the input")
					res[0].Elem().FieldByName("ResultMetadata").SetZero()
					assert.Equal(t, want.Interface(), res[0].Interface(), "the answer read is the output")
				})
			}
		}
	}
}

// fill sets every member of v, a value of an SDK type: strings (with
// characters XML escapes) and enums (one of their values), numbers from
// n, times on the millisecond in UTC, lists and maps of items each.
func fill(v reflect.Value, items int, n *int, depth int) {
	*n++
	switch {
	case depth > 24:
	case v.Kind() == reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), items, n, depth+1)
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(Start.Add(time.Duration(*n) * time.Millisecond).UTC()))
	case v.Kind() == reflect.Struct:
		for _, f := range wireFields(v.Type()) {
			fill(v.Field(f.index), items, n, depth+1)
		}
	case v.Kind() == reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), items, items))
		for i := range items {
			fill(v.Index(i), items, n, depth+1)
		}
	case v.Kind() == reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for range items {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(k, items, n, depth+1)
			fill(e, items, n, depth+1)
			v.SetMapIndex(k, e)
		}
	case v.Kind() == reflect.String:
		if values := v.MethodByName("Values"); values.IsValid() {
			all := values.Call(nil)[0]
			v.Set(all.Index(*n % all.Len()))
			return
		}
		v.SetString(fmt.Sprintf("v%d <&> \"'", *n))
	case v.Kind() == reflect.Bool:
		v.SetBool(*n%2 == 0)
	case v.CanInt():
		v.SetInt(int64(*n))
	case v.CanFloat():
		v.SetFloat(float64(*n) + 0.25)
	}
}

// TestQueryErrors: an error of the simulated AWS reaches the SDK's own
// client through the query protocol as it reaches the deployer
// in-process: the same operation error, code, message (escaped in XML)
// and HTTP status, so cloud's classification (throttled, transient, not
// found) and errors.As on the SDK's types see what AWS's error would give
// them; a call the simulation could not send is a send error. (Auto
// Scaling API Reference, Common Errors; Elastic Load Balancing API
// Reference, Common Errors: the ErrorResponse of the query protocol.)
func TestQueryErrors(t *testing.T) {
	world, err := sim.New(clock.NewVirtual(Start), World(Cell{Services: 1, Instances: 1}))
	require.NoError(t, err)
	srv := httptest.NewServer(serveSim(http.NewServeMux(), world, naming.RoleARN(Account, naming.DeployerRoleName(Region))))
	defer srv.Close()
	tgt := target.Target{AccountID: Account, Region: Region}
	creds := credentials.NewStaticCredentialsProvider("AKIANOTISSUED", "secret", "")
	there := remoteBuild(sdkClient(srv), srv.URL, func(aws.CredentialsProvider) cloud.AssetStore { return nil })(tgt, creds, nil)
	here := world.Build(nil)(tgt, creds, nil)
	validation := &smithy.GenericAPIError{Code: cloud.CodeValidation, Message: `The group "<web & api>" is not valid`, Fault: smithy.FaultClient}
	api := func(code string) error {
		return &smithy.GenericAPIError{Code: code, Message: code + " happened", Fault: smithy.FaultClient}
	}
	calls := map[string]func(c *cloud.Clients) error{
		"DescribeAutoScalingGroups": func(c *cloud.Clients) error {
			_, err := c.AutoScaling.DescribeAutoScalingGroups(context.Background(), &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{"web"}})
			return err
		},
		"CreateAutoScalingGroup": func(c *cloud.Clients) error {
			_, err := c.AutoScaling.CreateAutoScalingGroup(context.Background(), &autoscaling.CreateAutoScalingGroupInput{AutoScalingGroupName: aws.String("web"), MinSize: aws.Int32(0), MaxSize: aws.Int32(1)})
			return err
		},
		"DeleteAutoScalingGroup": func(c *cloud.Clients) error {
			_, err := c.AutoScaling.DeleteAutoScalingGroup(context.Background(), &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String("web")})
			return err
		},
		"DescribeTargetHealth": func(c *cloud.Clients) error {
			_, err := c.ELBv2.DescribeTargetHealth(context.Background(), &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String("arn:aws:elasticloadbalancing:us-east-1:111111111111:targetgroup/web/1")})
			return err
		},
		"DescribeInstanceHealth": func(c *cloud.Clients) error {
			_, err := c.ELB.DescribeInstanceHealth(context.Background(), &elb.DescribeInstanceHealthInput{LoadBalancerName: aws.String("web")})
			return err
		},
	}
	tests := []struct {
		op        string
		fault     error // nil: the unissued key's own error
		code      string
		status    int
		throttled bool
		transient bool
	}{
		{op: "DescribeAutoScalingGroups", code: cloud.CodeInvalidClientTokenID, status: http.StatusForbidden},
		{op: "DescribeAutoScalingGroups", fault: sim.Throttling(), code: cloud.CodeThrottling, status: http.StatusBadRequest, throttled: true, transient: true},
		{op: "DescribeTargetHealth", fault: sim.Throttling(), code: cloud.CodeThrottling, status: http.StatusBadRequest, throttled: true, transient: true},
		{op: "DescribeInstanceHealth", fault: sim.Throttling(), code: cloud.CodeThrottling, status: http.StatusBadRequest, throttled: true, transient: true},
		{op: "DescribeAutoScalingGroups", fault: sim.InternalError(), code: cloud.CodeInternalError, status: http.StatusInternalServerError, transient: true},
		{op: "DescribeAutoScalingGroups", fault: sim.AccessDenied(), code: cloud.CodeAccessDenied, status: http.StatusForbidden},
		{op: "CreateAutoScalingGroup", fault: validation, code: cloud.CodeValidation, status: http.StatusBadRequest},
		{op: "CreateAutoScalingGroup", fault: api(cloud.CodeAlreadyExists), code: cloud.CodeAlreadyExists, status: http.StatusBadRequest},
		{op: "CreateAutoScalingGroup", fault: api(cloud.CodeLimitExceeded), code: cloud.CodeLimitExceeded, status: http.StatusBadRequest},
		{op: "DeleteAutoScalingGroup", fault: api(cloud.CodeResourceInUse), code: cloud.CodeResourceInUse, status: http.StatusBadRequest},
		{op: "DeleteAutoScalingGroup", fault: api(cloud.CodeScalingActivityInProgress), code: cloud.CodeScalingActivityInProgress, status: http.StatusBadRequest},
		{op: "DescribeTargetHealth", fault: api(cloud.CodeTargetGroupNotFound), code: cloud.CodeTargetGroupNotFound, status: http.StatusBadRequest},
		{op: "DescribeTargetHealth", fault: sim.Timeout(), transient: true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s", tt.op, tt.code), func(t *testing.T) {
			if tt.fault != nil {
				id, err := world.Faults().Add(sim.Rule{Op: tt.op, Err: tt.fault})
				require.NoError(t, err)
				defer world.Faults().Remove(id)
			}
			want, got := calls[tt.op](here), calls[tt.op](there)
			require.Error(t, want)
			require.Error(t, got)
			var wantOp, gotOp *smithy.OperationError
			require.ErrorAs(t, want, &wantOp)
			require.ErrorAs(t, got, &gotOp)
			assert.Equal(t, wantOp.ServiceID, gotOp.ServiceID)
			assert.Equal(t, tt.op, gotOp.OperationName)
			assert.Equal(t, tt.throttled, cloud.Throttled(got), "throttled")
			assert.Equal(t, tt.transient, cloud.IsTransient(got), "transient")
			assert.Equal(t, cloud.IsNotFoundCode(want), cloud.IsNotFoundCode(got), "not found")
			if tt.code == "" {
				var send *smithyhttp.RequestSendError
				assert.ErrorAs(t, got, &send, "a call not sent")
				return
			}
			var wantAPI, gotAPI smithy.APIError
			require.ErrorAs(t, want, &wantAPI)
			require.ErrorAs(t, got, &gotAPI)
			assert.Equal(t, tt.code, gotAPI.ErrorCode())
			assert.Equal(t, wantAPI.ErrorMessage(), gotAPI.ErrorMessage())
			var resp *smithyhttp.ResponseError
			require.ErrorAs(t, got, &resp)
			assert.Equal(t, tt.status, resp.HTTPStatusCode())
		})
	}
	var exists *astypes.AlreadyExistsFault
	_, err = world.Faults().Add(sim.Rule{Op: "CreateAutoScalingGroup", Err: api(cloud.CodeAlreadyExists)})
	require.NoError(t, err)
	assert.ErrorAs(t, calls["CreateAutoScalingGroup"](there), &exists, "the SDK's own type of the error, as AWS's answer gives")
}

// TestQueryRefusals: a request the simulated AWS cannot take is refused
// with AWS's code for what is wrong with it, named, before any call.
func TestQueryRefusals(t *testing.T) {
	world, err := sim.New(clock.NewVirtual(Start), World(Cell{Services: 1, Instances: 1}))
	require.NoError(t, err)
	srv := httptest.NewServer(serveSim(http.NewServeMux(), world, naming.RoleARN(Account, naming.DeployerRoleName(Region))))
	defer srv.Close()
	const auth = "AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE/20260105/us-east-1/autoscaling/aws4_request, SignedHeaders=host, Signature=00"
	tests := []struct {
		name    string
		form    string
		headers map[string]string
		status  int
		code    string
		says    string
	}{
		{name: "unsigned", form: "Action=DescribeAutoScalingGroups&Version=2011-01-01", headers: map[string]string{accountHeader: Account, offsetHeader: "0"},
			status: http.StatusForbidden, code: "MissingAuthenticationToken"},
		{name: "unknown version", form: "Action=DescribeAutoScalingGroups&Version=2010-01-01", headers: map[string]string{"Authorization": auth, accountHeader: Account, offsetHeader: "0"},
			status: http.StatusBadRequest, code: "InvalidAction", says: "2010-01-01"},
		{name: "unknown action", form: "Action=DescribeEverything&Version=2011-01-01", headers: map[string]string{"Authorization": auth, accountHeader: Account, offsetHeader: "0"},
			status: http.StatusBadRequest, code: "InvalidAction", says: "DescribeEverything"},
		{name: "unknown parameter", form: "Action=DescribeAutoScalingGroups&Version=2011-01-01&AutoScalingGroupName.member.1=web", headers: map[string]string{"Authorization": auth, accountHeader: Account, offsetHeader: "0"},
			status: http.StatusBadRequest, code: "ValidationError", says: "AutoScalingGroupName.member.1"},
		{name: "not a number", form: "Action=DescribeAutoScalingGroups&Version=2011-01-01&MaxRecords=many", headers: map[string]string{"Authorization": auth, accountHeader: Account, offsetHeader: "0"},
			status: http.StatusBadRequest, code: "ValidationError", says: "MaxRecords"},
		{name: "no account", form: "Action=DescribeAutoScalingGroups&Version=2011-01-01", headers: map[string]string{"Authorization": auth, offsetHeader: "0"},
			status: http.StatusBadRequest, code: "MissingParameter", says: accountHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := world.TotalCalls()
			req, err := http.NewRequest(http.MethodPost, srv.URL+QueryPath, strings.NewReader(tt.form))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.Contains(t, string(body), "<Code>"+tt.code+"</Code>")
			assert.Contains(t, string(body), tt.says)
			assert.Equal(t, before, world.TotalCalls(), "no call made")
		})
	}
}

// TestQueryTimeline: a call through the query protocol is made at its
// offset on its task's Timeline and spends there the time the simulated
// AWS says it spent, as in-process.
func TestQueryTimeline(t *testing.T) {
	world, err := sim.New(clock.NewVirtual(Start), World(Cell{Services: 1, Instances: 1}))
	require.NoError(t, err)
	srv := httptest.NewServer(serveSim(http.NewServeMux(), world, naming.RoleARN(Account, naming.DeployerRoleName(Region))))
	defer srv.Close()
	var at []time.Duration
	world.OnCall(func(ctx context.Context, c sim.Call) {
		at = append(at, c.At.Sub(Start))
		fanout.Spend(ctx, time.Second)
	})
	clients := remoteBuild(sdkClient(srv), srv.URL, func(aws.CredentialsProvider) cloud.AssetStore { return nil })(
		target.Target{AccountID: Account, Region: Region}, credentials.NewStaticCredentialsProvider("AKIANOTISSUED", "secret", ""), nil)
	ctx, tl := fanout.WithTimeline(context.Background())
	fanout.Spend(ctx, 7*time.Second)
	_, err = clients.AutoScaling.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{})
	require.Error(t, err, "an unissued key")
	_, _ = clients.ELBv2.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{})
	require.Len(t, at, 2)
	assert.Equal(t, []time.Duration{7 * time.Second, 8 * time.Second}, at, "each made at its offset, the second after the first's second")
	assert.Equal(t, 9*time.Second, tl.Elapsed(), "both calls' time spent")
}

// TestWireServices: what the report says of the handler process's calls
// (QuotaMeasures) is what remoteBuild makes: each client of cloud.Clients
// is the SDK's own, of a queryServices service, or a JSON one of
// jsonServices, and the report names each.
func TestWireServices(t *testing.T) {
	clients := reflect.ValueOf(remoteBuild(http.DefaultClient, "http://127.0.0.1:1", func(aws.CredentialsProvider) cloud.AssetStore { return nil })(
		target.Target{AccountID: Account, Region: Region}, credentials.NewStaticCredentialsProvider("AKIAEXAMPLE", "secret", ""), nil)).Elem()
	var wire, json []string
	for i := range clients.NumField() {
		f := clients.Type().Field(i)
		if f.Type.Kind() != reflect.Interface || f.Name == "Assets" {
			continue
		}
		typ := clients.Field(i).Elem().Type()
		if typ.Kind() == reflect.Struct {
			_, ok := typ.FieldByName("remote")
			require.True(t, ok, "%s is a JSON client", f.Name)
			json = append(json, f.Name)
			continue
		}
		wire = append(wire, f.Name)
		assert.Contains(t, typ.Elem().PkgPath(), "aws-sdk-go-v2/service/", "%s is the SDK's own client", f.Name)
	}
	var served []string
	for _, s := range queryServices {
		served = append(served, s.client)
		assert.Contains(t, QuotaMeasures, s.name)
	}
	assert.ElementsMatch(t, served, wire, "the SDK's own clients are those of the services served in the query protocol")
	assert.ElementsMatch(t, jsonServices, append(json, "STS"), "the others cross as JSON")
	_, isJSON := remoteSTSAt(http.DefaultClient, "").(remoteSTS)
	assert.True(t, isJSON, "STS crosses as JSON")
	for _, s := range jsonServices {
		assert.Contains(t, QuotaMeasures, s)
	}
}

// closingBody is a request body that cannot be read once closed, as the
// SDK's is not.
type closingBody struct {
	r      io.Reader
	closed bool
}

func (b *closingBody) Read(p []byte) (int, error) {
	if b.closed {
		return 0, errors.New("read on a closed request body")
	}
	return b.r.Read(p)
}

func (b *closingBody) Close() error { b.closed = true; return nil }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestQueryClientOwnsItsBody: the SDK closes a request's body once the
// answer's header is in, which a region on loopback gives before the
// transport has done with the body (under a CPU quota the connection
// was dropped under the answer being read); the transport reads a copy
// of its own, whole after the SDK's close.
func TestQueryClientOwnsItsBody(t *testing.T) {
	var sent io.ReadCloser
	hc := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		sent = req.Body
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
	})}
	orig := &closingBody{r: strings.NewReader("Action=DescribeAutoScalingGroups&Version=2011-01-01")}
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:1"+QueryPath, orig)
	require.NoError(t, err)
	_, err = queryClient{account: Account, next: hc}.Do(req)
	require.NoError(t, err)
	require.NoError(t, orig.Close(), "as the SDK does once the answer's header is in")
	body, err := io.ReadAll(sent)
	require.NoError(t, err)
	assert.Equal(t, "Action=DescribeAutoScalingGroups&Version=2011-01-01", string(body))
	assert.Equal(t, Account, req.Header.Get(accountHeader))
}

// TestBodyTransport: the next transport gets the request's body as a
// reader that is not an io.WriterTo (the SDK's closed body answers
// io.EOF to WriteTo, which net/http takes for an error), reading the
// same bytes, and the caller's request is left as it was.
func TestBodyTransport(t *testing.T) {
	var seen *http.Request
	var read string
	next := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		seen = req
		if req.Body != nil {
			b, err := io.ReadAll(req.Body)
			require.NoError(t, err)
			read = string(b)
		}
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	})
	body := io.NopCloser(strings.NewReader("Action=DescribeAutoScalingGroups"))
	require.Implements(t, (*io.WriterTo)(nil), body, "the body the SDK gives")
	req, err := http.NewRequest(http.MethodPost, "http://example/", body)
	require.NoError(t, err)
	_, err = bodyTransport{next}.RoundTrip(req)
	require.NoError(t, err)
	assert.NotImplements(t, (*io.WriterTo)(nil), seen.Body, "the body sent")
	assert.Equal(t, "Action=DescribeAutoScalingGroups", read)
	assert.Equal(t, body, req.Body, "the caller's request")

	get, err := http.NewRequest(http.MethodGet, "http://example/", nil)
	require.NoError(t, err)
	_, err = bodyTransport{next}.RoundTrip(get)
	require.NoError(t, err)
	assert.Same(t, get, seen, "a request without a body goes as it is")
}
