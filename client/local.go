package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/ferryhq/ferry/client/help"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/tuning"
)

// Defaults of ferry local.
const (
	// localAddr is where ferry local listens, and where ferry deploy
	// --local and ferry local world look for it. Port 4590 is ferry's own:
	// 4566 is LocalStack's, and a developer often runs both.
	localAddr = "127.0.0.1:4590"
	// localSpeed is simulated seconds per wall second: a ten-minute deploy
	// in ten seconds.
	localSpeed = 60
	// worldTimeout bounds ferry local world's request, in wall time.
	worldTimeout = 10 * time.Second
)

// defaultWorld is the world of the deploy-test example, a copy of
// testdata/worlds/deploy-test.json (a test keeps the two equal), embedded
// so that ferry local runs from any directory.
//
//go:embed local_world.json
var defaultWorld []byte

// localCommand is ferry local, and ferry local world.
type localCommand struct {
	env    Env
	listen string
	world  string
	speed  float64
	// reconcile is how often the region starts a reconcile pass.
	reconcile time.Duration
	verbose   bool
	endpoint  string
	asJSON    bool
	// project, since and follow filter and follow ferry local events.
	project string
	since   string
	follow  bool
	// set are the flags given on the command line, to refuse those of the
	// other form (serving, or local world) rather than ignore them.
	set func() []string
}

// The flags of each form of ferry local.
var (
	localServeFlags  = []string{"listen", "world", "speed", "verbose", "reconcile"}
	localWorldFlags  = []string{"endpoint", "json"}
	localEventsFlags = []string{"project", "since", "f"}
)

func (c *localCommand) spec() commandSpec {
	return commandSpec{
		name:    "local",
		args:    "[world [ACTION ARGS...] | events]",
		summary: "Run a local region (Step Functions, S3 and a simulated AWS), or show its world",
		help: `Local runs an embedded region on this machine until Ctrl-C: the deployer's
state machine and handlers, an S3-compatible store with the deployer bucket,
and a simulated AWS seeded from a world file, all on one port (--listen).
It prints the endpoint, the state machine ARN and the bucket; its root,
opened in a browser, is a console that shows the executions (each as the
state machine's graph with the current state lit, and its history) and
the simulated world, live. Point the
client at it with AWS_ENDPOINT_URL=http://ADDR, or use ferry deploy --local
for the default address.

--world names a world file (see internal/local/sim); without it, the world of the
deploy-test example (testdata/worlds/deploy-test.json), built into ferry.
--speed scales simulated time: with 60 a ten-minute deploy takes ten
seconds; 0 runs as fast as possible (time jumps whenever every deploy
waits, and passes with the wall clock while no deploy runs). --reconcile
starts a reconcile pass every so much simulated time (default 15m, as the
deployer's schedule in AWS; 0: none): it records each config's drift and
heals the fleets of releases that say "reconcile": "heal". Logs go to
stderr: warnings only, or every state and API call with --verbose.

"ferry local world" asks a running region (--endpoint, default
$FERRY_LOCAL_ENDPOINT, else $AWS_ENDPOINT_URL, else http://127.0.0.1:4590,
as for --local) for its simulated world and
prints every Auto Scaling group with its tags, desired capacity and
instances, and the load balancers' registrations; --json prints the raw
snapshot.

"ferry local world ACTION" changes the running region's world from outside
ferry, as a person at the console would, to make drift for a test or a
demo: delete-group GROUP (with its instances), set-capacity GROUP MIN
DESIRED MAX, kill-instance INSTANCE_ID (Auto Scaling replaces it), detach
GROUP LOAD_BALANCER (a classic load balancer or target group, by name).
ferry status --drift then shows it.

"ferry local events" lists the deploy events the deployer put on the
simulated default event buses (ferry help events), oldest first: their
time, detail-type, project/config, release and the task that put them.
--project keeps one project's; --since keeps those at or after an RFC 3339
time, or a duration before the region's now (--since 10m); --json prints
each event's detail, one a line (ferry schema events); -f keeps printing
new ones until Ctrl-C.`,
		exits: []int{exitFailure},
	}
}

func (c *localCommand) defineFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.listen, "listen", localAddr, "`ADDR` (host:port) to serve on")
	fs.StringVar(&c.world, "world", "", "world `FILE` of the simulated AWS (default: the deploy-test world)")
	fs.Float64Var(&c.speed, "speed", localSpeed, "simulated seconds per wall second (`N`); 0 for as fast as possible")
	fs.DurationVar(&c.reconcile, "reconcile", tuning.ReconcileEvery, "start a reconcile pass every `DURATION` of simulated time, as the deployer's schedule does (0: none)")
	fs.BoolVar(&c.verbose, "verbose", false, "log every state and API call")
	fs.StringVar(&c.endpoint, "endpoint", "", "`URL` of the running region, for ferry local world and events")
	fs.BoolVar(&c.asJSON, "json", false, "print the world, or the events, as JSON, for ferry local world and events")
	fs.StringVar(&c.project, "project", "", "only the events of `PROJECT`, for ferry local events")
	fs.StringVar(&c.since, "since", "", "only the events at or after `TIME` (RFC 3339, or a duration before the region's now), for ferry local events")
	fs.BoolVar(&c.follow, "f", false, "keep printing new events as they come, for ferry local events")
	c.set = func() []string {
		var names []string
		fs.Visit(func(f *flag.Flag) { names = append(names, f.Name) })
		return names
	}
}

// misplaced is the first flag given that belongs to the form not run
// (other), "" when there is none.
func (c *localCommand) misplaced(other []string) string {
	if c.set == nil {
		return ""
	}
	for _, name := range c.set() {
		if slices.Contains(other, name) {
			return name
		}
	}
	return ""
}

// Run runs the local region until ctx is done or, with the argument
// world, prints the world of a running one.
func (c *localCommand) Run(ctx context.Context, args []string) error {
	switch {
	case len(args) == 0:
		if f := c.misplaced(slices.Concat(localWorldFlags, localEventsFlags)); f != "" {
			return usageErrorf(c.spec(), "--%s is for ferry local world or events, not for serving a region", f)
		}
		if c.speed < 0 {
			return usageErrorf(c.spec(), "--speed %v must not be negative", c.speed)
		}
		if !(c.speed <= limits.MaxLocalSpeed) { // NaN too
			return usageErrorf(c.spec(), "--speed %v must be a number from 0 to %d", c.speed, limits.MaxLocalSpeed)
		}
		if c.reconcile < 0 {
			return usageErrorf(c.spec(), "--reconcile %v must not be negative", c.reconcile)
		}
		return commandFailure("local", exitFailure, c.serve(ctx))
	case len(args) >= 1 && args[0] == "events":
		return c.runEvents(ctx, args[1:])
	case len(args) >= 1 && args[0] == "world":
		if f := c.misplaced(localServeFlags); f != "" {
			return usageErrorf(c.spec(), "--%s is for serving a region (ferry local), not for ferry local world", f)
		}
		if f := c.misplaced(localEventsFlags); f != "" {
			return usageErrorf(c.spec(), "--%s is for ferry local events, not for ferry local world", f)
		}
		url := firstNonEmpty(c.endpoint, c.env.Getenv(envLocalEndpoint), c.env.Getenv("AWS_ENDPOINT_URL"), "http://"+localAddr)
		if len(args) == 1 {
			return commandFailure("local world", exitFailure, c.showWorld(ctx, url))
		}
		m, err := meddling(args[1:])
		if err != nil {
			return usageErrorf(c.spec(), "%v", err)
		}
		return commandFailure("local world", exitFailure, c.meddle(ctx, url, m))
	}
	return usageErrorf(c.spec(), "unexpected argument %q (the subcommands are world and events)", strings.Join(args, " "))
}

// meddling is the change ferry local world ACTION ARGS... asks for.
func meddling(args []string) (region.Meddling, error) {
	m := region.Meddling{Action: args[0]}
	want := map[string]string{
		region.MeddleDeleteGroup:   "GROUP",
		region.MeddleSetCapacity:   "GROUP MIN DESIRED MAX",
		region.MeddleKillInstance:  "INSTANCE_ID",
		region.MeddleDetach:        "GROUP LOAD_BALANCER",
		region.MeddleInterruptSpot: "GROUP COUNT",
	}
	usage, ok := want[m.Action]
	if !ok {
		return m, fmt.Errorf("unknown world action %q (there are delete-group, set-capacity, kill-instance, detach and interrupt-spot)", m.Action)
	}
	if len(args)-1 != len(strings.Fields(usage)) {
		return m, fmt.Errorf("world %s takes %s", m.Action, usage)
	}
	switch m.Action {
	case region.MeddleDeleteGroup:
		m.Group = args[1]
	case region.MeddleKillInstance:
		m.Instance = args[1]
	case region.MeddleDetach:
		m.Group, m.LoadBalancer = args[1], args[2]
	case region.MeddleInterruptSpot:
		n, err := strconv.Atoi(args[2])
		if err != nil || n < 1 {
			return m, fmt.Errorf("world interrupt-spot: COUNT %q is not a count of at least 1", args[2])
		}
		m.Group, m.Count = args[1], n
	case region.MeddleSetCapacity:
		m.Group = args[1]
		for i, p := range []*int32{&m.Min, &m.Desired, &m.Max} {
			n, err := strconv.ParseInt(args[2+i], 10, 32)
			if err != nil || n < 0 {
				return m, fmt.Errorf("world set-capacity: %s %q is not a count", strings.Fields(usage)[1+i], args[2+i])
			}
			*p = int32(n)
		}
	}
	return m, nil
}

// meddle asks the region at endpoint to make m, and says what it did.
func (c *localCommand) meddle(ctx context.Context, endpoint string, m region.Meddling) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, worldTimeout)
	defer cancel()
	url := strings.TrimSuffix(endpoint, "/") + region.WorldPath
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%w (is ferry local running?)", err)
	}
	defer resp.Body.Close()
	var answer struct{ Done, Error string }
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&answer); err != nil {
		return fmt.Errorf("POST %s: %s", url, resp.Status)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("world %s: %s", m.Action, answer.Error)
	}
	fmt.Fprintln(c.env.Stdout, answer.Done)
	return nil
}

// serve runs the local region until ctx is done.
func (c *localCommand) serve(ctx context.Context) error {
	var spec sim.WorldSpec
	var err error
	if c.world != "" {
		spec, err = sim.Load(c.world)
	} else {
		spec, err = sim.ParseWorld(defaultWorld)
	}
	if err != nil {
		return err
	}
	level := slog.LevelWarn
	if c.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(c.env.Stderr, &slog.HandlerOptions{Level: level}))
	r, err := region.New(ctx, region.Options{World: spec, Speed: c.speed, Logger: logger, ReconcileEvery: c.reconcile, Help: help.Handler()})
	if err != nil {
		return err
	}
	defer r.Close()
	ln, err := net.Listen("tcp", c.listen)
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s is in use: is ferry local already running? use --listen HOST:PORT for another address", c.listen)
	}
	if err != nil {
		return fmt.Errorf("listen on %s: %s", c.listen, contactCause(err))
	}
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(c.env.Stdout, "ferry local: %s  state machine %s  bucket %s  (Ctrl-C stops)\nconsole: open %s/ in a browser\n%s",
		url, r.StateMachineARN(), r.Bucket(), url, localExports(url))
	if err := r.Serve(ctx, ln); err != nil {
		return err
	}
	if err := r.Close(); err != nil {
		return err
	}
	fmt.Fprintln(c.env.Stdout, "ferry local: stopped")
	return nil
}

// showWorld prints the world of the region at endpoint.
func (c *localCommand) showWorld(ctx context.Context, endpoint string) error {
	body, err := fetchWorld(ctx, strings.TrimSuffix(endpoint, "/")+region.WorldPath)
	if err != nil {
		return fmt.Errorf("%w (is ferry local running?)", err)
	}
	var snap sim.Snapshot
	if err := json.Unmarshal(body, &snap); err != nil {
		return fmt.Errorf("the region's world does not decode: %w", err)
	}
	if c.asJSON {
		return writeEvent(c.env.Stdout, evWorld, snap, true)
	}
	printWorld(c.env.Stdout, snap)
	return nil
}

func fetchWorld(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, worldTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New("GET " + url + ": " + resp.Status)
	}
	return body, nil
}

// printWorld writes a snapshot for people: per account-region, every ASG
// with its tags, capacity and instances, then the load balancers' and
// target groups' registrations.
func printWorld(w io.Writer, snap sim.Snapshot) {
	fmt.Fprintf(w, "world at %s\n", snap.Time.UTC().Format(time.RFC3339))
	if len(snap.Accounts) == 0 {
		fmt.Fprintln(w, "\nnothing deployed or registered")
		return
	}
	for _, a := range snap.Accounts {
		fmt.Fprintf(w, "\naccount %s  %s\n", a.Account, a.Region)
		if len(a.Groups) == 0 {
			fmt.Fprintln(w, "  no Auto Scaling groups")
		}
		for _, g := range a.Groups {
			status := ""
			if g.Status != "" {
				status = "  (" + g.Status + ")"
			}
			fmt.Fprintf(w, "  ASG %s%s\n", g.Name, status)
			fmt.Fprintf(w, "    desired %d  min %d  max %d  instances %d\n", g.Desired, g.Min, g.Max, len(g.Instances))
			fmt.Fprintf(w, "    tags    %s\n", joinMap(g.Tags, " "))
			if len(g.Instances) > 0 {
				tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
				for _, i := range g.Instances {
					fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\n", i.ID, i.Zone, i.Lifecycle, i.Health, joinMap(i.LB, " "))
				}
				_ = tw.Flush()
			}
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		printRegistrations(tw, "load balancer", a.LoadBalancers)
		printRegistrations(tw, "target group", a.TargetGroups)
		_ = tw.Flush()
	}
}

func printRegistrations(tw io.Writer, kind string, regs []sim.RegistrationSnapshot) {
	for _, r := range regs {
		registered := joinMap(r.Instances, " ")
		if registered == "" {
			registered = "(no instances)"
		}
		if r.CutConnections > 0 {
			registered += fmt.Sprintf("  CUT CONNECTIONS: %d", r.CutConnections)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", kind, r.Name, registered)
	}
}

// joinMap renders a map as sorted key=value pairs.
func joinMap(m map[string]string, sep string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, sep)
}

// localExports is what the banner of ferry local at url offers to paste
// in another shell: every variable ferry deploy --local and the AWS CLI
// and SDKs need to reach it (the region checks this key only in identity
// proofs, whose signatures it verifies; other requests are not checked;
// AWS_EC2_METADATA_DISABLED keeps the SDKs from asking for instance
// credentials and warning about it).
func localExports(url string) string {
	vars := [][2]string{
		{envLocalEndpoint, url},
		{"AWS_ENDPOINT_URL", url},
		{"AWS_REGION", localRegion},
		{"AWS_ACCESS_KEY_ID", "ferry-local"},
		{"AWS_SECRET_ACCESS_KEY", "ferry-local"},
		{"AWS_EC2_METADATA_DISABLED", "true"},
	}
	var b strings.Builder
	b.WriteString("in another shell, paste these, then run ferry deploy --local FILE (or the AWS CLI):\n")
	for _, v := range vars {
		fmt.Fprintf(&b, "export %s=%s\n", v[0], shellQuote(v[1]))
	}
	return b.String()
}
