package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/local/sim"
)

// e2eStart is the virtual time every end-to-end region starts at.
var e2eStart = time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)

// testRegion is a local region started in-process on a free port, on
// discrete-event time, for driving the client's commands end to end.
type testRegion struct {
	*region.Region
	url string
	clk *clock.Virtual

	// changes is closed and replaced whenever any execution records an
	// event: the followers' Sleep waits on it instead of sleeping.
	mu      sync.Mutex
	gen     uint64
	changes chan struct{}

	// observer, when set, sees every history event (see
	// region.Options.Observer).
	observer atomic.Pointer[func(arn string, ev asl.Event)]

	// handed is a hold of the region's time the next command run takes
	// over (handOver).
	handed atomic.Pointer[func()]

	// random is every command's Env.Random: release ids, and so the
	// jitter of health checks seeded by the execution's id, are the same
	// at every run, and differ between the deploys of one run.
	random lockedReader
}

// lockedReader is a seeded random stream safe for concurrent commands.
type lockedReader struct {
	mu  sync.Mutex
	src *rand.ChaCha8
}

func (r *lockedReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.src == nil {
		r.src = rand.NewChaCha8([32]byte{})
	}
	return r.src.Read(p)
}

// startRegion starts a region on the world file (relative to the repo's
// testdata/worlds) and stops it when the test ends.
func startRegion(t *testing.T, world string, opts ...func(*region.Options)) *testRegion {
	t.Helper()
	spec, err := sim.Load(filepath.Join("..", "testdata", "worlds", world))
	require.NoError(t, err)
	tr := &testRegion{clk: clock.NewVirtual(e2eStart), changes: make(chan struct{})}
	o := region.Options{
		World: spec,
		Clock: tr.clk,
		Observer: func(arn string, ev asl.Event) {
			if f := tr.observer.Load(); f != nil {
				(*f)(arn, ev)
			}
			tr.bump()
		},
	}
	for _, f := range opts {
		f(&o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := region.New(ctx, o)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, r.Close())
		if err := <-served; err != nil {
			// A connection the SDK opened but never used keeps the
			// HTTP server's graceful shutdown waiting past its bound;
			// the region itself is closed.
			t.Logf("region server: %v", err)
		}
	})
	tr.Region, tr.url = r, "http://"+ln.Addr().String()
	return tr
}

func (tr *testRegion) bump() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.gen++
	close(tr.changes)
	tr.changes = make(chan struct{})
}

// observe sets the observer of history events for the rest of the test.
func (tr *testRegion) observe(f func(arn string, ev asl.Event)) { tr.observer.Store(&f) }

// sleeper is an Env.Sleep that returns as soon as any execution of the
// region has recorded an event since it last returned: no wall-clock
// sleeping, no busy loop. A long wall-clock bound only keeps a broken test
// from hanging.
func (tr *testRegion) sleeper() func(ctx context.Context, d time.Duration) error {
	var seen uint64
	return func(ctx context.Context, _ time.Duration) error {
		tr.mu.Lock()
		gen, ch := tr.gen, tr.changes
		tr.mu.Unlock()
		if gen == seen {
			select {
			case <-ch:
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(30 * time.Second):
			}
		}
		tr.mu.Lock()
		seen = tr.gen
		tr.mu.Unlock()
		return nil
	}
}

// pass is a command's Env.Sleep: the command holds the region's
// discrete-event time while it works (ferryCtx), and its sleep of d lets
// d of the region's time pass, and a millisecond more, so it never wakes
// at the instant a state runs: a follower reads the history as it would
// on AWS, polling every d, and shows the same at every run.
func (tr *testRegion) pass(ctx context.Context, d time.Duration) error {
	return tr.Pass(ctx, d+time.Millisecond)
}

// env is the Env of one command run against the region.
func (tr *testRegion) env(stdout, stderr *bytes.Buffer, vars ...string) Env {
	m := map[string]string{envLocalEndpoint: tr.url, "USER": "tester"}
	for i := 0; i+1 < len(vars); i += 2 {
		m[vars[i]] = vars[i+1]
	}
	return Env{
		Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr,
		Getenv: func(k string) string { return m[k] },
		Sleep:  tr.pass,
		Now:    tr.clk.Now,
		Random: &tr.random,
	}
}

// handOver gives release, a hold of the region's time (Hold), to the
// next command run (ferryAt), which lets it go once it holds the time
// itself: nothing runs between the test's look at the region and that
// command, however loaded the machine.
func (tr *testRegion) handOver(release func()) { tr.handed.Store(&release) }

// result is what one command run printed and returned.
type result struct {
	code           int
	stdout, stderr string
}

// ferry runs one command against the region.
// Under --json, every object it prints is checked against ferry schema
// events.
func (tr *testRegion) ferry(t *testing.T, args ...string) result {
	t.Helper()
	r := tr.ferryCtx(context.Background(), args...)
	if asksJSON(args) {
		checkEvents(t, r.stdout)
	}
	return r
}

func (tr *testRegion) ferryCtx(ctx context.Context, args ...string) result {
	return tr.ferryAt(ctx, nil, args...)
}

// ferryAt runs one command against the region, its Env changed by edit
// (nil: none): a person at a terminal, say.
func (tr *testRegion) ferryAt(ctx context.Context, edit func(*Env), args ...string) result {
	var out, errOut bytes.Buffer
	release := tr.Hold()
	defer release()
	if handed := tr.handed.Swap(nil); handed != nil {
		(*handed)()
	}
	env := tr.env(&out, &errOut)
	if edit != nil {
		edit(&env)
	}
	code := run(ctx, env, args)
	return result{code, out.String(), errOut.String()}
}

// releaseIDRe matches the release ids ferry deploy makes.
var releaseIDRe = regexp.MustCompile(`[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}`)

// startedRe matches the line where ferry deploy names the release it
// started.
var startedRe = regexp.MustCompile(`(?m)^ferry (?:deploy|rollback|destroy|promote): \S+ \S+ release (\S+)$`)

// releaseIDOf is the release id of the deploy a deploy's output says it
// started.
func releaseIDOf(t *testing.T, output string) string {
	t.Helper()
	m := startedRe.FindStringSubmatch(output)
	require.NotNil(t, m, "no started release in:\n%s", output)
	return m[1]
}

// keepAliveRe matches the lines a log gets while nothing changes
// (display.waiting): when they fall depends on when the follower polls
// against the region's progress, so goldens leave them out;
// TestLogNeverSilentFor30s checks them on a recorded history.
var keepAliveRe = regexp.MustCompile(`(?m)^ *\d+:\d\d(:\d\d)?  (waiting\b.*|baking(; .*)?|retiring: .*|cleaning up\b.*)\n`)

// stable replaces what differs between runs (release ids, keep-alive
// lines) for golden comparison.
func stable(s string) string {
	return keepAliveRe.ReplaceAllString(releaseIDRe.ReplaceAllString(s, "RELEASE"), "")
}

// groups lists the live ASGs of the world in account/region (not those
// being deleted), by name, with their instance counts.
func (tr *testRegion) groups(account, awsRegion string) map[string]int {
	out := map[string]int{}
	for _, a := range tr.World().Snapshot().Accounts {
		if a.Account != account || a.Region != awsRegion {
			continue
		}
		for _, g := range a.Groups {
			if g.Status != "" {
				continue // "Delete in progress"
			}
			out[g.Name] = len(g.Instances)
		}
	}
	return out
}
