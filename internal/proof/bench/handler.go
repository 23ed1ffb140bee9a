package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/ferryhq/ferry/internal/buildinfo"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/deployer"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/identity"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/local/s3server"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/target"
)

// Invocation is one task's run: its result or error, and what it cost
// where it ran.
type Invocation struct {
	Output json.RawMessage
	Err    error
	// Took is its real run time, CPU the process's CPU time during it,
	// Alloc the bytes it allocated (heapAllocs).
	Took, CPU time.Duration
	Alloc     uint64
	// Waited is the part of Took it waited for the region's answers (a
	// handler process's: waits), not its own time.
	Waited time.Duration
	// Alone says CPU is the task's alone: it ran in a handler process
	// that runs nothing else (not in-process beside the region).
	Alone bool
	// Spent is its calls' time on its Timeline (package fanout): the
	// modelled cost of each, side by side counted once, and the backoff
	// of throttled attempts.
	Spent time.Duration
	// S3 are its S3 calls by operation ("s3:GetObject").
	S3 map[string]int
}

// runTask runs a task with run, on a new Timeline, measuring it; calls
// counts its S3 calls.
func runTask(ctx context.Context, calls *s3Calls, run func(ctx context.Context) (json.RawMessage, error)) Invocation {
	ctx, tl := fanout.WithTimeline(ctx)
	s3Before := calls.snapshot()
	allocBefore, cpuBefore := heapAllocs(), processCPU()
	began := time.Now()
	out, err := run(ctx)
	inv := Invocation{Output: out, Err: err, Took: time.Since(began)}
	inv.CPU, inv.Alloc = processCPU()-cpuBefore, heapAllocs()-allocBefore
	inv.Spent, inv.S3 = tl.Elapsed(), diff(s3Before, calls.snapshot())
	return inv
}

// A Handler runs the measured release's tasks somewhere else than the
// region: in another process, as the Lambda runs them apart from AWS.
// now is the region's time, which stands still while a task runs.
type Handler interface {
	Invoke(ctx context.Context, req execution.Request, now time.Time) (Invocation, error)
}

// serveRegion serves r (region.Handler: S3, Step Functions, STS) and its
// simulated AWS (serveSim, as the deployer's Lambda role) on a loopback
// listener of its own, and returns its URL and how to stop it.
func serveRegion(r *region.Region) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	info := r.Info()
	mux := http.NewServeMux()
	serveSim(mux, r.World(), naming.RoleARN(info.Account, naming.DeployerRoleName(info.Region)))
	mux.Handle("/", r.Handler())
	srv := &http.Server{Handler: timeServed(mux), ReadHeaderTimeout: time.Minute}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close(); <-done }, nil
}

// taskRequest is what a handler process is asked: a task, at the
// region's time.
type taskRequest struct {
	Request execution.Request `json:"request"`
	Now     time.Time         `json:"now"`
}

// taskResult is a handler process's answer: an Invocation as it crosses
// a process, its error by name and message.
type taskResult struct {
	Output   json.RawMessage `json:"output,omitempty"`
	ErrName  string          `json:"error_name,omitempty"`
	ErrCause string          `json:"error_cause,omitempty"`
	Took     time.Duration   `json:"took"`
	CPU      time.Duration   `json:"cpu"`
	Alloc    uint64          `json:"alloc"`
	Waited   time.Duration   `json:"waited"`
	Spent    time.Duration   `json:"spent"`
	S3       map[string]int  `json:"s3,omitempty"`
}

// taskError is a task's error as a handler process reported it: its
// state machine error name and its message.
type taskError struct{ name, msg string }

func (e *taskError) Error() string     { return e.msg }
func (e *taskError) ErrorName() string { return e.name }

var _ failure.Named = (*taskError)(nil)

// ServeHandler is a handler process (what the benchmark's command runs
// as -quota-child): the deployer, as the region at endpoint builds it,
// reaching the region's S3 and Step Functions with the SDK over HTTP and
// its simulated AWS at AWSPath, each call's modelled cost (callCost for
// S3; the region's for AWS) spent on its task's Timeline; it logs as the
// Lambda does (JSON at Info), its lines then dropped. It writes "ready" on
// out once built, then runs each taskRequest line of in and writes its
// taskResult line on out, until in ends.
func ServeHandler(ctx context.Context, endpoint string, callCost time.Duration, in io.Reader, out io.Writer) error {
	waited := &waits{}
	hc := &http.Client{Transport: waitingTransport{w: waited, next: bodyTransport{http.DefaultTransport.(*http.Transport).Clone()}}}
	info, err := regionInfo(ctx, hc, endpoint)
	if err != nil {
		return err
	}
	calls := newS3Calls(callCost)
	s3c := s3server.NewClient(endpoint, func(o *s3.Options) { o.HTTPClient = hc })
	clk := &setClock{}
	api := sfn.NewFromConfig(aws.Config{Region: info.Region, BaseEndpoint: aws.String(endpoint), HTTPClient: hc,
		Credentials: credentials.NewStaticCredentialsProvider("bench", "bench", "")})
	assets := func(publish aws.CredentialsProvider) cloud.AssetStore {
		return calls.assets(s3server.NewClient(endpoint, func(o *s3.Options) { o.HTTPClient, o.Credentials = hc, publish }))
	}
	connector := cloud.NewConnector(remoteSTSAt(hc, endpoint), remoteBuild(hc, endpoint, assets), cloud.ConnectorOptions{Clock: clk})
	dep, err := deployer.New(deployer.Config{
		Bucket:          info.Bucket,
		DefaultTarget:   target.Target{AccountID: info.Account, Region: info.Region},
		Executions:      api,
		Starts:          api,
		StateMachineARN: info.StateMachineARN,
		// A proof names the region's in-process endpoint: it is replayed
		// to the region at endpoint.
		Identities: identity.Verifier{Client: &http.Client{Transport: rehost{to: endpoint, next: hc.Transport}}, Endpoint: func(*url.URL) bool { return true }},
		Version:    buildinfo.Get().String(),
		Clock:      clk,
		Logger:     slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}, calls.store(s3c), connector)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(out, quotaReady+"\n"); err != nil {
		return err
	}
	return serveTasks(ctx, dep, clk, calls, waited, in, out)
}

// serveTasks runs each taskRequest line of in with dep at its time (set
// on clk) and writes its taskResult line on out, with the time it waited
// for the region's answers (waited), until in ends.
func serveTasks(ctx context.Context, dep *deployer.Deployer, clk *setClock, calls *s3Calls, waited *waits, in io.Reader, out io.Writer) error {
	dec, enc := json.NewDecoder(in), json.NewEncoder(out)
	for {
		var tr taskRequest
		if err := dec.Decode(&tr); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("bench: a task request: %w", err)
		}
		clk.set(tr.Now)
		waited.take()
		var inv Invocation
		// A CPU profile of the process tells its tasks apart by label.
		pprof.Do(ctx, pprof.Labels("task", tr.Request.Task), func(ctx context.Context) {
			inv = runTask(ctx, calls, func(ctx context.Context) (json.RawMessage, error) { return dep.Invoke(ctx, tr.Request) })
		})
		res := taskResult{Output: inv.Output, Took: inv.Took, CPU: inv.CPU, Alloc: inv.Alloc, Waited: waited.take(), Spent: inv.Spent, S3: inv.S3}
		if inv.Err != nil {
			res.ErrName, res.ErrCause = failure.NameOf(inv.Err), inv.Err.Error()
		}
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
}

// regionInfo reads the region's coordinates (region.InfoPath).
func regionInfo(ctx context.Context, hc *http.Client, endpoint string) (*region.Info, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+region.InfoPath, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("bench: the region's info: %w", err)
	}
	defer resp.Body.Close()
	var info region.Info
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("bench: the region's info: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		return nil, fmt.Errorf("bench: the region's info: %w", err)
	}
	return &info, nil
}

// setClock is the region's time as each task request gives it: the
// region's time stands still while a task runs.
type setClock struct{ now atomic.Pointer[time.Time] }

func (c *setClock) set(t time.Time) { c.now.Store(&t) }

func (c *setClock) Now() time.Time {
	if t := c.now.Load(); t != nil {
		return *t
	}
	return time.Time{}
}

// rehost sends every request to the host of the URL to, whatever host
// it names, its Host header (which a signature covers) left as it was.
type rehost struct {
	to   string
	next http.RoundTripper
}

func (h rehost) RoundTrip(req *http.Request) (*http.Response, error) {
	u, err := url.Parse(h.to)
	if err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	if out.Host == "" {
		out.Host = req.URL.Host
	}
	out.URL.Scheme, out.URL.Host = u.Scheme, u.Host
	return h.next.RoundTrip(out)
}

// handlerProcess is a handler process (ServeHandler) started by
// startHandler: the parent's side.
type handlerProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *json.Decoder
	mu    sync.Mutex
	enc   *json.Encoder
}

var _ Handler = (*handlerProcess)(nil)

// startHandler starts cmd, a handler process, waits for it to say it is
// ready and then, when q is set, moves it into q.
func startHandler(cmd *exec.Cmd, q *CPUQuota) (*handlerProcess, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h := &handlerProcess{cmd: cmd, stdin: stdin, enc: json.NewEncoder(stdin)}
	r := bufio.NewReader(stdout)
	if line, err := r.ReadString('\n'); err != nil || line != quotaReady+"\n" {
		h.kill()
		return nil, fmt.Errorf("bench: the handler process did not say %q (%q, %v)", quotaReady, line, err)
	}
	if q != nil {
		if err := q.Add(cmd.Process.Pid); err != nil {
			h.kill()
			return nil, fmt.Errorf("bench: move the handler process into its group: %w", err)
		}
	}
	h.out = json.NewDecoder(r)
	return h, nil
}

// Invoke runs req in the handler process at now.
func (h *handlerProcess) Invoke(_ context.Context, req execution.Request, now time.Time) (Invocation, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.enc.Encode(taskRequest{Request: req, Now: now}); err != nil {
		return Invocation{}, fmt.Errorf("bench: the handler process: %w", err)
	}
	var res taskResult
	if err := h.out.Decode(&res); err != nil {
		return Invocation{}, fmt.Errorf("bench: the handler process's answer: %w", err)
	}
	inv := Invocation{Output: res.Output, Took: res.Took, CPU: res.CPU, Alloc: res.Alloc, Waited: res.Waited, Spent: res.Spent, S3: res.S3, Alone: true}
	if res.ErrName != "" {
		inv.Err = &taskError{name: res.ErrName, msg: res.ErrCause}
	}
	return inv, nil
}

// close ends the handler process (its input ends) and waits for it.
func (h *handlerProcess) close() error {
	_ = h.stdin.Close()
	if err := h.cmd.Wait(); err != nil {
		return fmt.Errorf("bench: the handler process: %w", err)
	}
	return nil
}

func (h *handlerProcess) kill() {
	_ = h.cmd.Process.Kill()
	_ = h.cmd.Wait()
}
