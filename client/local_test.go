package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/client/help"
	"github.com/ferryhq/ferry/internal/clock"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/console"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// TestLocalEmbeddedWorld: the world built into ferry local is the
// deploy-test world of testdata, byte for byte.
func TestLocalEmbeddedWorld(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "testdata", "worlds", "deploy-test.json"))
	require.NoError(t, err)
	assert.Equal(t, string(want), string(defaultWorld),
		"client/local_world.json must be a copy of testdata/worlds/deploy-test.json")
	_, err = sim.ParseWorld(defaultWorld)
	assert.NoError(t, err)
}

// TestLocalServesUntilCancelled starts ferry local on a free port, reads
// its banner, talks to it, and stops it as Ctrl-C does.
func TestLocalServesUntilCancelled(t *testing.T) {
	assert.Equal(t, "127.0.0.1:4590", localAddr, "ferry's own port, not LocalStack's 4566")
	assert.Equal(t, "http://"+localAddr, defaultLocalEndpoint)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, Env{Stdin: strings.NewReader(""), Stdout: pw, Stderr: &stderr},
			[]string{"local", "--listen", "127.0.0.1:0", "--speed", "0"})
		pw.Close()
	}()
	out := bufio.NewReader(pr)
	banner, err := out.ReadString('\n')
	require.NoError(t, err, "stderr: %s", stderr.String())
	url := regexp.MustCompile(`^ferry local: (http://127\.0\.0\.1:\d+)  `).FindStringSubmatch(banner)
	require.Len(t, url, 2, banner)
	assert.Contains(t, banner, "state machine arn:aws:states:us-east-1:111111111111:stateMachine:ferry-deployer")
	assert.Contains(t, banner, "bucket ")
	consoleLine, err := out.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "console: open "+url[1]+"/ in a browser\n", consoleLine)
	exports := map[string]string{}
	_, err = out.ReadString('\n') // what to do with the lines below
	require.NoError(t, err)
	for range 6 {
		l, err := out.ReadString('\n')
		require.NoError(t, err)
		k, v, ok := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(l, "export "), "\n"), "=")
		require.True(t, ok, l)
		exports[k] = v
	}
	assert.Equal(t, map[string]string{
		envLocalEndpoint: url[1], "AWS_ENDPOINT_URL": url[1], "AWS_REGION": "us-east-1",
		"AWS_ACCESS_KEY_ID": "ferry-local", "AWS_SECRET_ACCESS_KEY": "ferry-local", "AWS_EC2_METADATA_DISABLED": "true",
	}, exports, "the banner names every variable needed, as lines that paste")

	resp, err := http.Get(url[1] + region.InfoPath)
	require.NoError(t, err)
	var info region.Info
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&info))
	resp.Body.Close()
	assert.Contains(t, banner, "bucket "+info.Bucket)
	assert.Zero(t, info.Speed)

	req, err := http.NewRequest(http.MethodGet, url[1]+"/", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/html")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/html", "the console is at the root")

	// The reference's pages, which the console's header links.
	resp, err = http.Get(url[1] + console.HelpPath + "guarantees")
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(page), "<h1 id=\"guarantees-and-limits\">Guarantees and limits</h1>")
	resp, err = http.Get(url[1] + console.HelpPath)
	require.NoError(t, err)
	index, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	for _, name := range help.Names() {
		assert.Contains(t, string(index), `<a href="`+name+`">`, "the index links %s", name)
	}

	c, stdout, errOut := runFerry(t, "local", "world", "--endpoint", url[1])
	assert.Equal(t, exitOK, c, errOut)
	assert.Contains(t, stdout, "nothing deployed or registered")

	cancel()
	rest, err := io.ReadAll(out)
	require.NoError(t, err)
	assert.Equal(t, exitOK, <-code, stderr.String())
	assert.Equal(t, "ferry local: stopped\n", string(rest))
	assert.Empty(t, stderr.String(), "quiet by default")
}

// TestLocalWorldView prints the world of a region after a deploy, for
// people (golden) and as JSON.
func TestLocalWorldView(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewVirtual(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	spec, err := sim.ParseWorld(defaultWorld)
	require.NoError(t, err)
	r, err := region.New(ctx, region.Options{World: spec, Clock: clk})
	require.NoError(t, err)
	defer r.Close()
	srv := httptest.NewServer(r.Handler())
	defer srv.Close()

	rel, err := release.ReadFile(filepath.Join("..", "testdata", "deploy-test-release.json"))
	require.NoError(t, err)
	rel.ReleaseID = "r20260301-1"
	rel.CreatedAt = clk.Now().Add(-time.Minute)
	raw, err := json.Marshal(rel)
	require.NoError(t, err)
	x, err := r.StartRelease(ctx, raw)
	require.NoError(t, err)
	require.NoError(t, x.Wait(ctx))
	require.Equal(t, asl.StatusSucceeded, x.Describe().Status, x.Describe().Cause)

	code, stdout, stderr := runFerry(t, "local", "world", "--endpoint", srv.URL+"/")
	require.Equal(t, exitOK, code, stderr)
	got := "$ ferry local world\n" + stdout
	checkGolden(t, "local-world", got)
	assert.Contains(t, stdout, "ASG "+naming.GroupName(rel.ProjectName, rel.ConfigName, "web", rel.ReleaseID))

	code, stdout, stderr = runFerry(t, "local", "world", "--json", "--endpoint", srv.URL)
	require.Equal(t, exitOK, code, stderr)
	var want bytes.Buffer
	require.NoError(t, writeEvent(&want, evWorld, r.World().Snapshot(), true))
	assert.JSONEq(t, want.String(), stdout)
}

func TestLocalErrors(t *testing.T) {
	closed := deadRegion(t)
	addr := strings.TrimPrefix(closed, "http://")

	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		code   int
		stderr string
	}{
		{"no region", []string{"local", "world", "--endpoint", closed}, nil, exitFailure, "is ferry local running?"},
		{"endpoint from the environment", []string{"local", "world"}, map[string]string{"AWS_ENDPOINT_URL": closed}, exitFailure, addr},
		{"unknown subcommand", []string{"local", "status"}, nil, exitUsage, `unexpected argument "status"`},
		{"negative speed", []string{"local", "--speed", "-1"}, nil, exitUsage, "--speed -1 must not be negative"},
		{"NaN speed", []string{"local", "--listen", "256.0.0.1:1", "--speed", "NaN"}, nil, exitUsage, "--speed NaN must be a number from 0 to 10000"},
		{"infinite speed", []string{"local", "--listen", "256.0.0.1:1", "--speed", "+Inf"}, nil, exitUsage, "--speed +Inf must be a number from 0 to 10000"},
		{"huge speed", []string{"local", "--listen", "256.0.0.1:1", "--speed", "1e300"}, nil, exitUsage, "--speed 1e+300 must be a number from 0 to 10000"},
		{"endpoint from FERRY_LOCAL_ENDPOINT", []string{"local", "world"}, map[string]string{envLocalEndpoint: closed, "AWS_ENDPOINT_URL": deadRegion(t)}, exitFailure, addr},
		{"missing world", []string{"local", "--world", "testdata/no-such-world.json"}, nil, exitFailure, "no-such-world.json"},
		{"bad listen address", []string{"local", "--listen", "256.0.0.1:1"}, nil, exitFailure, "listen on 256.0.0.1:1"},
		{"busy port", []string{"local", "--listen", addr}, nil, exitFailure, addr + " is in use: is ferry local already running? use --listen HOST:PORT for another address\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return tt.env[k] }}
			code := run(context.Background(), env, tt.args)
			assert.Equal(t, tt.code, code, errOut.String())
			assert.Contains(t, errOut.String(), tt.stderr)
		})
	}
}

// TestLocalFlagsBelongToOneForm: every flag of ferry local is for
// serving, for ferry local world (and events), or for ferry local events
// alone, so a flag of another form is refused, never ignored.
func TestLocalFlagsBelongToOneForm(t *testing.T) {
	fs := flag.NewFlagSet("local", flag.ContinueOnError)
	(&localCommand{}).defineFlags(fs)
	var all []string
	fs.VisitAll(func(f *flag.Flag) { all = append(all, f.Name) })
	forms := slices.Concat(localServeFlags, localWorldFlags, localEventsFlags)
	assert.ElementsMatch(t, all, forms)
}

// TestPrintWorldShowsCuts: ferry local world shows a load balancer's cut
// connections when it has any, and nothing of them otherwise.
func TestPrintWorldShowsCuts(t *testing.T) {
	snap := sim.Snapshot{Accounts: []sim.AccountSnapshot{{Account: "111111111111", Region: "us-east-1",
		LoadBalancers: []sim.RegistrationSnapshot{{Name: "web-elb", Instances: map[string]string{"i-1": "healthy"}, CutConnections: 2}},
		TargetGroups:  []sim.RegistrationSnapshot{{Name: "web-tg", Instances: map[string]string{"i-1": "healthy"}}},
	}}}
	var out bytes.Buffer
	printWorld(&out, snap)
	assert.Regexp(t, `load balancer\s+web-elb\s+i-1=healthy  CUT CONNECTIONS: 2`, out.String())
	assert.Regexp(t, `target group\s+web-tg\s+i-1=healthy\n`, out.String())
}
