package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/target"
)

// handlerProcess and handlerQuota, given, make this test binary a
// handler process (TestHandlerProcess) for the region at handlerProcess;
// handlerQuota makes it also fail unless it ended inside a CPUQuota's
// group.
var (
	handlerProcessFlag = flag.String("handler-process", "", "serve as a handler process for the region at this URL (TestHandlerProcess)")
	handlerQuotaFlag   = flag.Bool("handler-quota", false, "as a handler process, fail unless inside a CPU quota's group")
)

// TestHandlerProcess is not a test: run by handlerCommand, it is the
// handler process.
func TestHandlerProcess(t *testing.T) {
	if *handlerProcessFlag == "" {
		t.Skip("only run as a handler process")
	}
	code := 0
	if err := ServeHandler(context.Background(), *handlerProcessFlag, DefaultCallCost, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if own, _ := os.ReadFile("/proc/self/cgroup"); *handlerQuotaFlag && !strings.Contains(string(own), "ferry-bench-") {
		fmt.Fprintln(os.Stderr, "the handler process ran outside its CPU quota")
		code = 3
	}
	os.Exit(code)
}

// handlerCommand starts this test binary as a handler process.
func handlerCommand(quota bool) func(endpoint string) *exec.Cmd {
	return func(endpoint string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHandlerProcess$", "-handler-process", endpoint, fmt.Sprintf("-handler-quota=%t", quota))
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
		cmd.Stderr = os.Stderr
		return cmd
	}
}

// countingHandler counts the tasks a Handler ran, and sums the time they
// waited for answers.
type countingHandler struct {
	next   Handler
	n      atomic.Int32
	waited atomic.Int64
}

func (c *countingHandler) Invoke(ctx context.Context, req execution.Request, now time.Time) (Invocation, error) {
	c.n.Add(1)
	inv, err := c.next.Invoke(ctx, req, now)
	c.waited.Add(int64(inv.Waited))
	return inv, err
}

// TestRemoteHandler: the measured release's tasks run in a handler
// process that reaches the region, its simulated AWS and S3 over HTTP,
// and the release goes as it goes in-process: every task ran there, the
// same calls by operation, and the same virtual times (each call's cost
// and the throttled attempts' backoff spent on its task's Timeline).
func TestRemoteHandler(t *testing.T) {
	ctx := context.Background()
	c := Cell{Services: 2, Instances: 3}
	here, err := Run(ctx, c, Ferry, Options{})
	require.NoError(t, err)

	var h *handlerProcess
	counted := &countingHandler{}
	remote := func(endpoint string) (Handler, error) {
		var err error
		h, err = startHandler(handlerCommand(false)(endpoint), nil)
		counted.next = h
		return counted, err
	}
	there, err := Run(ctx, c, Ferry, Options{Remote: remote})
	require.NoError(t, err)
	require.NotNil(t, h)
	require.NoError(t, h.close(), "the handler process ends when its input does")

	assert.Equal(t, there.Invocations, int(counted.n.Load()), "every task of the measured release ran in the handler process")
	assert.Positive(t, counted.waited.Load(), "it waited for the region's answers, which say how long they took")
	assert.Equal(t, here.Invocations, there.Invocations)
	assert.Equal(t, here.ByOp, there.ByOp)
	assert.Equal(t, here.S3Calls, there.S3Calls)
	assert.Positive(t, there.S3Calls)
	assert.Equal(t, here.CleanUpSuccess, there.CleanUpSuccess, "the calls' time passes as in-process")
	assert.Equal(t, here.Steps, there.Steps)
	assert.Positive(t, there.HandlerMax)
}

// TestRunUnderQuota: where this machine allows a cpu control group, the
// handler process runs in it (it checks its own /proc/self/cgroup before
// it exits), the measured release's longest invocation is reported, and
// the group is gone after; elsewhere ErrNoQuota.
func TestRunUnderQuota(t *testing.T) {
	q, err := RunUnderQuota(context.Background(), Cell{Services: 1, Instances: 1}, GridOptions{CallCost: DefaultCallCost}, handlerCommand(true), LambdaCPUShare)
	if errors.Is(err, ErrNoQuota) {
		t.Skipf("no CPU quota on this machine: %v", err)
	}
	require.NoError(t, err)
	assert.Positive(t, q.MaxMS)
	assert.NotEmpty(t, q.MaxTask)
	assert.Contains(t, q.Method, "GOMAXPROCS=1")
	assert.Contains(t, q.Method, "28942", "0.29 of a 100 ms period")
	assert.Regexp(t, `the longest: [0-9.]*[1-9][0-9.]*ms of the handler process's CPU, [0-9.]+ms at the share, and [0-9.]*[1-9][0-9.]*ms more waiting for the answers`, q.Method, "its CPU time, from the handler process")
	own, err := os.ReadFile("/proc/self/cgroup")
	require.NoError(t, err)
	root, path, ok := cgroupV1CPU(mustRead(t, "/proc/self/mountinfo"), string(own))
	if ok {
		entries, err := os.ReadDir(filepath.Join(root, path))
		require.NoError(t, err)
		for _, e := range entries {
			assert.NotContains(t, e.Name(), "ferry-bench-", "the group is removed")
		}
	}
	_, err = NewCPUQuota(0)
	assert.Error(t, err)
}

// TestRemoteErrors: an error of the simulated AWS reaches the handler
// process as the SDK's would (an OperationError naming the service and
// operation, around the HTTP status, around the API error's code), so the
// deployer classifies it as it would AWS's; a call the world cannot
// answer is a send error.
func TestRemoteErrors(t *testing.T) {
	world, err := sim.New(clock.NewVirtual(Start), World(Cell{Services: 1, Instances: 1}))
	require.NoError(t, err)
	srv := httptest.NewServer(serveAWS(world, naming.RoleARN(Account, naming.DeployerRoleName(Region))))
	defer srv.Close()
	creds := credentials.NewStaticCredentialsProvider("AKIANOTISSUED", "secret", "")
	clients := remoteBuild(sdkClient(srv), srv.URL, func(aws.CredentialsProvider) cloud.AssetStore { return nil })(
		target.Target{AccountID: Account, Region: Region}, creds, nil)

	_, err = clients.EC2.DescribeSubnets(context.Background(), &ec2.DescribeSubnetsInput{})
	var op *smithy.OperationError
	require.ErrorAs(t, err, &op)
	assert.Equal(t, "EC2", op.ServiceID)
	assert.Equal(t, "DescribeSubnets", op.OperationName)
	var apiErr smithy.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "InvalidClientTokenId", apiErr.ErrorCode(), "a key the world did not issue (sim.World.Build)")
	var resp *smithyhttp.ResponseError
	require.ErrorAs(t, err, &resp)
	assert.Equal(t, http.StatusForbidden, resp.HTTPStatusCode())

	bad := remote{http: srv.Client(), url: srv.URL, client: "Nothing", service: "Nothing"}
	_, err = call[ec2.DescribeSubnetsOutput](context.Background(), bad, "DescribeSubnets", &ec2.DescribeSubnetsInput{})
	var send *smithyhttp.RequestSendError
	require.ErrorAs(t, err, &send)
	assert.Contains(t, err.Error(), `no client "Nothing"`)
}

// TestCovered: the time a handler process waited for answers counts
// answers awaited side by side once.
func TestCovered(t *testing.T) {
	at := func(ms int) time.Time { return Start.Add(time.Duration(ms) * time.Millisecond) }
	span := func(from, to int) [2]time.Time { return [2]time.Time{at(from), at(to)} }
	tests := []struct {
		name  string
		spans [][2]time.Time
		want  time.Duration
	}{
		{name: "none"},
		{name: "one", spans: [][2]time.Time{span(0, 10)}, want: 10 * time.Millisecond},
		{name: "apart", spans: [][2]time.Time{span(20, 25), span(0, 10)}, want: 15 * time.Millisecond},
		{name: "overlapping", spans: [][2]time.Time{span(0, 10), span(5, 20)}, want: 20 * time.Millisecond},
		{name: "nested", spans: [][2]time.Time{span(0, 30), span(5, 10), span(12, 20)}, want: 30 * time.Millisecond},
		{name: "touching", spans: [][2]time.Time{span(10, 20), span(0, 10)}, want: 20 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, covered(tt.spans))
		})
	}
}

// TestOwnTime: an invocation's own time is its real time less its waits;
// one run alone in a handler process takes no less than its CPU time at
// the Lambda's share, since work done while a call was out still took
// the share's time. In-process, the CPU is the region's too, and does
// not count.
func TestOwnTime(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	cpu := ms(290) // OnLambda: about 1,000 ms at 0.29 vCPU
	tests := []struct {
		name string
		inv  Invocation
		want time.Duration
	}{
		{"in-process: real time less waits", Invocation{Took: ms(900), Waited: ms(100), CPU: cpu}, ms(800)},
		{"alone, waits hid CPU work: CPU at the share", Invocation{Took: ms(1000), Waited: ms(200), CPU: cpu, Alone: true}, OnLambda(cpu)},
		{"alone, real time above CPU at the share", Invocation{Took: ms(1500), Waited: ms(100), CPU: cpu, Alone: true}, ms(1400)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.inv.ownTime())
		})
	}
}
