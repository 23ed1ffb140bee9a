package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/client/help"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// keepScreenshots is where the console's tests write their screenshots,
// to be looked at ("": the test's temporary directory).
var keepScreenshots = flag.String("console-screenshots", "", "keep the console tests' screenshots in this directory")

// shownWithin is how long a deploy started while the console is open may
// take to be shown: the page re-reads the executions every second.
const shownWithin = 5 * time.Second

// consoleScreenshot is where -update writes the console's screenshot, the
// one the local help page shows.
const consoleScreenshot = "../testdata/console.png"

// browser starts headless Chromium (Debian's chromium) for the test, with
// the flags this closed network needs (without the background-networking
// ones, Chromium tries to reach Google's hosts and waits on them). Its
// profile lives in a directory chromedp makes and removes, not in
// t.TempDir: Chromium's helper processes can outlive the browser by a few
// milliseconds and still write there, and the testing package fails a test
// whose TempDir cannot be removed (CI did, once).
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed: .ci/run installs it (Debian's chromium and chromium-driver)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.WindowSize(1600, 1100),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return ctx
}

// TestConsoleInABrowser opens the local region's console in a real
// browser during a deploy: the execution appears with its current state
// lit in the graph and the new instances in the world; once time runs the
// state moves on, the instances come into service and the execution ends
// Succeeded. It saves a screenshot of the deploy under way (-update: the
// local help page's).
func TestConsoleInABrowser(t *testing.T) {
	ctx := browser(t)
	requests := recordRequests(ctx)
	tr := startRegion(t, "deploy-test.json")
	release := tr.Hold()
	defer release()
	res := tr.ferry(t, "deploy", "--local", "--no-wait", deployTestRelease)
	require.Equal(t, exitOK, res.code, res.stderr)

	var during, world string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(tr.url+"/"),
		chromedp.WaitVisible(`#graph .state.current`, chromedp.ByQuery),
		chromedp.AttributeValue(`#graph .state.current`, "data-state", &during, nil, chromedp.ByQuery),
		chromedp.WaitVisible(`#world .instances tbody tr`, chromedp.ByQuery),
		chromedp.Text(`#world`, &world, chromedp.ByQuery),
	))
	assert.Contains(t, []string{"Healthy?", "WaitForHealthy", "CheckHealthy"}, during, "time stands still in the health checks")
	assert.Contains(t, world, "Pending", "the new instances are booting")
	screenshot(t, ctx)

	release()
	var after, status string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.WaitVisible(`#execution-status .status.SUCCEEDED`, chromedp.ByQuery),
		chromedp.WaitVisible(`#graph .state.succeeded[data-state="Success"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#world .lc-InService`, chromedp.ByQuery),
		chromedp.Text(`#execution-status`, &status, chromedp.ByQuery),
		chromedp.Text(`#world`, &after, chromedp.ByQuery),
	))
	assert.Contains(t, status, "SUCCEEDED")
	assert.Contains(t, after, "InService", "the instances came into service")
	assert.Contains(t, after, "0 cut", "no connection cut")
	assertSameOriginJSON(t, tr.url, requests())
}

// TestConsoleShowsTheCanaryAnalysis: a release 30% slower than the one
// it replaces (the demo world's ubuntu-slower: DeployTest/Latency 130
// against 100) is rolled back by its canary analysis; once it has ended,
// the console still shows the analysis that rolled it back: the service,
// its score and class, and the metric's verdict, means and samples.
func TestConsoleShowsTheCanaryAnalysis(t *testing.T) {
	ctx := browser(t)
	tr := startRegion(t, "demo.json")
	base := tr.ferry(t, "deploy", "--local", "../testdata/demo/deploy-test-v2.json")
	require.Equal(t, exitOK, base.code, base.stderr)
	slower := tr.ferry(t, "deploy", "--local", "../testdata/demo/deploy-test-slower.json")
	require.Equal(t, exitFailure, slower.code, slower.stderr)
	require.Contains(t, slower.stdout, "canary analysis scored 0")

	var head, metric string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(tr.url+"/"),
		chromedp.WaitVisible(`#execution-status .status.FAILED`, chromedp.ByQuery),
		chromedp.WaitVisible(`#analysis[data-class="fail"]`, chromedp.ByQuery),
		chromedp.Text(`#analysis .analysis-head`, &head, chromedp.ByQuery),
		chromedp.Text(`#analysis tr[data-metric="DeployTest/Latency"]`, &metric, chromedp.ByQuery),
	))
	assert.Equal(t, "web: score 0, fail", head)
	assert.Regexp(t, `high\s+0\.0\d+\s+1[23]\d(\.\d+)? against (9\d|10\d)(\.\d+)?\s+\d+ new · \d+ previous`, metric)
	keepScreenshot(t, ctx, "console-analysis.png")
}

// TestConsoleLinksTheHelp: the console's header links the reference's
// pages, which ferry local serves: the link leads to the list of topics,
// a topic to its page, and the page's own links lead back to the list
// and to the console.
func TestConsoleLinksTheHelp(t *testing.T) {
	ctx := browser(t)
	tr := startRegion(t, "deploy-test.json", func(o *region.Options) { o.Help = help.Handler() })
	var index, title, back string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(tr.url+"/"),
		chromedp.WaitVisible(`#help`, chromedp.ByQuery),
		chromedp.Click(`#help`, chromedp.ByQuery),
		chromedp.WaitVisible(`a[href="guarantees"]`, chromedp.ByQuery),
		chromedp.Text(`body`, &index, chromedp.ByQuery),
		chromedp.Click(`a[href="guarantees"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`h1#guarantees-and-limits`, chromedp.ByQuery),
		chromedp.Text(`h1`, &title, chromedp.ByQuery),
		chromedp.Click(`nav a[href="/"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#executions-title`, chromedp.ByQuery),
		chromedp.Location(&back),
	))
	for _, topic := range help.Topics {
		assert.Contains(t, index, topic.Summary, "the list names %s", topic.Name)
	}
	assert.Equal(t, "Guarantees and limits", title)
	assert.Equal(t, tr.url+"/", back, "the page's navigation leads back to the console")
}

// pageRequest is a request the page made: its URL, method and body's
// Content-Type.
type pageRequest struct{ url, method, contentType string }

// recordRequests records every request the browser's page sends from now
// on; the function returned lists them.
func recordRequests(ctx context.Context) func() []pageRequest {
	var mu sync.Mutex
	var seen []pageRequest
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			ct, _ := e.Request.Headers["Content-Type"].(string)
			mu.Lock()
			seen = append(seen, pageRequest{e.Request.URL, e.Request.Method, ct})
			mu.Unlock()
		}
	})
	return func() []pageRequest {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// assertSameOriginJSON: the page sent only requests to origin (the
// region), and every one with a body sent JSON, which no other page can
// send the region without a CORS preflight the region refuses.
func assertSameOriginJSON(t *testing.T, origin string, requests []pageRequest) {
	t.Helper()
	require.NotEmpty(t, requests)
	posts := 0
	for _, r := range requests {
		assert.True(t, strings.HasPrefix(r.url, origin+"/"), "a request to another origin: %s", r.url)
		if r.method != "GET" {
			posts++
			assert.Equal(t, "POST", r.method, r.url)
			assert.Equal(t, "application/x-amz-json-1.0", r.contentType, "a body that is not JSON")
		}
	}
	assert.Positive(t, posts, "the page calls the Step Functions API")
}

// screenshot saves the page as a PNG: with -update, the local help page's.
func screenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	var png []byte
	require.NoError(t, chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)))
	out := filepath.Join(t.TempDir(), "console.png")
	if *update {
		out = consoleScreenshot
	}
	require.NoError(t, os.WriteFile(out, png, 0o644))
	t.Logf("screenshot: %s", out)
}

// keepScreenshot saves the page as a PNG named name, to be looked at: in
// -console-screenshots, else in the test's temporary directory.
func keepScreenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := *keepScreenshots
	if dir == "" {
		dir = t.TempDir()
	}
	var png []byte
	require.NoError(t, chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)))
	out := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(out, png, 0o644))
	t.Logf("screenshot: %s", out)
}

// untilJS waits (up to timeout) until the page's expression is true.
func untilJS(expr string, timeout time.Duration) chromedp.Action {
	var ok bool
	return chromedp.Poll(expr, &ok, chromedp.WithPollingTimeout(timeout))
}

// titleNames is an expression true when the tab's title names the
// execution name (and says status, unless "").
func titleNames(name, status string) string {
	return fmt.Sprintf("document.title.includes(%q) && document.title.includes(%q)", name, status)
}

// TestConsoleFollowsTheNewestDeploy: the console shows the newest running
// deploy, and a deploy started while the page is open is shown within
// shownWithin, its name in the tab's title; an execution pinned in the URL
// (#execution=ARN) stays shown while another deploy runs, until the
// person asks to follow again.
func TestConsoleFollowsTheNewestDeploy(t *testing.T) {
	ctx := browser(t)
	tr := startRegion(t, "deploy-test.json")
	first := tr.ferry(t, "deploy", "--local", deployTestRelease)
	require.Equal(t, exitOK, first.code, first.stderr)
	name1 := naming.ExecutionName("coinbase/deploy-test", "development", releaseIDOf(t, first.stdout))
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(tr.url+"/"),
		untilJS(titleNames(name1, "SUCCEEDED"), 30*time.Second),
	))

	hold := tr.Hold()
	defer hold()
	second := tr.ferry(t, "deploy", "--local", "--no-wait", deployTestRelease)
	require.Equal(t, exitOK, second.code, second.stderr)
	name2 := naming.ExecutionName("coinbase/deploy-test", "development", releaseIDOf(t, second.stdout))
	require.NoError(t, chromedp.Run(ctx, untilJS(titleNames(name2, "RUNNING"), shownWithin)),
		"the deploy started while the page is open is shown")

	var arn1 string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Evaluate(fmt.Sprintf(`document.querySelector('[data-arn$=":%s"]').dataset.arn`, name1), &arn1)))
	var seen string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(tr.url+"/#execution="+url.QueryEscape(arn1)),
		untilJS(titleNames(name1, "SUCCEEDED"), shownWithin),
		chromedp.AttributeValue("body", "data-refreshed", &seen, nil, chromedp.ByQuery),
		untilJS(fmt.Sprintf(`document.body.dataset.refreshed !== %q`, seen), shownWithin),
	))
	var title string
	require.NoError(t, chromedp.Run(ctx, chromedp.Title(&title)))
	assert.Contains(t, title, name1, "the pinned execution stays shown while a newer deploy runs")

	require.NoError(t, chromedp.Run(ctx,
		chromedp.Click("#follow", chromedp.ByQuery),
		untilJS(titleNames(name2, "RUNNING"), shownWithin),
	), "following again shows the running deploy")
}

// TestConsoleListsExecutionsByKind: deploys, promotions and reconcile
// passes (and queries) are listed apart, told by their input, each list
// paged; the executions list is read to its end (nextToken), so a deploy
// older than a hundred reconcile passes is still listed, and followed.
func TestConsoleListsExecutionsByKind(t *testing.T) {
	ctx := browser(t)
	tr := startRegion(t, "deploy-test.json")
	res := tr.ferry(t, "deploy", "--local", deployTestRelease)
	require.Equal(t, exitOK, res.code, res.stderr)
	deployed := naming.ExecutionName("coinbase/deploy-test", "development", releaseIDOf(t, res.stdout))
	const passes = 120
	for i := range passes {
		_, _, err := tr.Start(fmt.Sprintf("reconcile-%03d", i), json.RawMessage(`{"reconcile_pass": {}}`))
		require.NoError(t, err)
	}
	_, _, err := tr.Start("plan-1", json.RawMessage(`{"plan": {}}`))
	require.NoError(t, err)
	_, _, err = tr.Start("promotion-1", json.RawMessage(`{"promotion": {}}`))
	require.NoError(t, err)

	total := func(list string) string { return fmt.Sprintf(`document.getElementById(%q).dataset.total`, list) }
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(tr.url+"/"),
		untilJS(total("queries")+` === "121"`, 30*time.Second),
	))
	var deploys, promotions []string
	var queries, older string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Evaluate(`[...document.querySelectorAll("#deploys li .name")].map((e) => e.textContent)`, &deploys),
		chromedp.Evaluate(`[...document.querySelectorAll("#promotions li .name")].map((e) => e.textContent)`, &promotions),
		chromedp.Text("#queries ul", &queries, chromedp.ByQuery),
		chromedp.Text("#queries .range", &older, chromedp.ByQuery),
	))
	assert.Equal(t, []string{deployed}, deploys, "the deploy, older than every reconcile pass, is listed")
	assert.Equal(t, []string{"promotion-1"}, promotions)
	assert.Contains(t, queries, "plan-1")
	assert.Contains(t, queries, "reconcile-119")
	assert.NotContains(t, queries, "reconcile-100", "a page holds ten")
	assert.Equal(t, "1–10 of 121", older)

	var title, page string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Title(&title),
		chromedp.Click("#queries .older", chromedp.ByQuery),
		chromedp.Text("#queries ul", &page, chromedp.ByQuery),
	))
	assert.Contains(t, title, deployed, "the newest deploy is shown, not the newest reconcile pass")
	assert.Contains(t, page, "reconcile-109")
	assert.NotContains(t, page, "reconcile-119")
}

// layoutFacts is what TestConsoleLayout reads from the page's DOM.
type layoutFacts struct {
	ViewportWidth float64  `json:"viewportWidth"`
	ScrollWidth   float64  `json:"scrollWidth"`
	Overflowing   []string `json:"overflowing"`
	GraphRight    float64  `json:"graphRight"`
	FigureRight   float64  `json:"figureRight"`
	StatesOutside []string `json:"statesOutside"`
	States        []string `json:"states"`
	Bottom        []string `json:"bottom"`
	Current       string   `json:"current"`
	CurrentFill   string   `json:"currentFill"`
	CheckHealthyY float64  `json:"checkHealthyY"`
	SuccessY      float64  `json:"successY"`
}

// layoutJS reads layoutFacts: what sticks out of the viewport, where the
// graph and its states are, which state is lit and how.
const layoutJS = `(() => {
  const r = (e) => e.getBoundingClientRect();
  const svg = document.getElementById("graph"), g = r(svg);
  const states = [...svg.querySelectorAll(".state")];
  const y = (n) => { const s = svg.querySelector('.state[data-state="' + n + '"] rect'); return s ? r(s).top : -1; };
  const maxY = Math.max(...states.map((s) => r(s).top));
  const cur = svg.querySelector(".state.current");
  return {
    viewportWidth: window.innerWidth,
    scrollWidth: document.documentElement.scrollWidth,
    overflowing: [...document.querySelectorAll("body *")].filter((e) => r(e).right > window.innerWidth + 0.5 || r(e).left < -0.5)
      .map((e) => e.tagName + "#" + e.id + "." + e.className),
    graphRight: g.right,
    figureRight: r(svg.parentElement).right,
    statesOutside: states.filter((s) => r(s).left < g.left - 0.5 || r(s).right > g.right + 0.5).map((s) => s.dataset.state),
    states: states.map((s) => s.dataset.state),
    bottom: states.filter((s) => r(s).top === maxY).map((s) => s.dataset.state).sort(),
    current: cur ? cur.dataset.state : "",
    currentFill: cur ? getComputedStyle(cur.querySelector("rect")).fill : "",
    checkHealthyY: y("CheckHealthy"),
    successY: y("Success"),
  };
})()`

// TestConsoleLayout: at 1,024 and 1,440 px wide, nothing on the page
// sticks out of the viewport, the graph fits its figure and shows only
// the deploy's branch (no promotion or query state), top to bottom with
// its ends (Success, FailureClean, FailureDirty) in the bottom row, and
// the current state is lit, a state's detail (the release, the State)
// open. It saves a screenshot at each width (in the
// test's temporary directory) to look at.
func TestConsoleLayout(t *testing.T) {
	ctx := browser(t)
	tr := startRegion(t, "deploy-test.json")
	release := tr.Hold()
	defer release()
	res := tr.ferry(t, "deploy", "--local", "--no-wait", deployTestRelease)
	require.Equal(t, exitOK, res.code, res.stderr)
	for _, width := range []int64{1024, 1440} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			var facts layoutFacts
			require.NoError(t, chromedp.Run(ctx,
				chromedp.EmulateViewport(width, 900),
				chromedp.Navigate(tr.url+"/"),
				chromedp.WaitVisible(`#graph .state.current`, chromedp.ByQuery),
				chromedp.WaitVisible(`#world .instances tbody tr`, chromedp.ByQuery),
				chromedp.Click(`#graph .state[data-state="Validate"]`, chromedp.ByQuery),
				chromedp.WaitVisible(`#detail pre`, chromedp.ByQuery),
				chromedp.Evaluate(layoutJS, &facts),
			))
			keepScreenshot(t, ctx, fmt.Sprintf("console-%d.png", width))

			assert.Equal(t, float64(width), facts.ViewportWidth)
			assert.LessOrEqual(t, facts.ScrollWidth, facts.ViewportWidth, "no horizontal scrolling")
			assert.Empty(t, facts.Overflowing, "elements sticking out of the viewport")
			assert.LessOrEqual(t, facts.GraphRight, facts.FigureRight+0.5, "the graph fits its figure")
			assert.Empty(t, facts.StatesOutside, "states outside the graph")
			assert.Contains(t, facts.States, "CheckHealthy")
			for _, other := range []string{"Promote", "Gate", "Reconcile", "Plan", "Drift", "Answered"} {
				assert.NotContains(t, facts.States, other, "a state of another branch")
			}
			assert.Equal(t, []string{"FailureClean", "FailureDirty", "Success"}, facts.Bottom, "the ends at the bottom")
			assert.Less(t, facts.CheckHealthyY, facts.SuccessY, "CheckHealthy above Success")
			assert.Contains(t, []string{"Healthy?", "WaitForHealthy", "CheckHealthy"}, facts.Current)
			assert.Equal(t, "rgb(11, 107, 203)", facts.CurrentFill, "the current state is lit")
		})
	}
}

// TestConsoleShowsDetails: a state of the graph, clicked, shows its input,
// output, error and cause at its last visit; an event of the history,
// clicked, shows its own. The deploy started while another holds the
// lock fails at Lock, and the console says why.
func TestConsoleShowsDetails(t *testing.T) {
	ctx := browser(t)
	tr := startRegion(t, "deploy-test.json")
	hold := tr.Hold()
	defer hold()
	first := tr.ferry(t, "deploy", "--local", "--no-wait", deployTestRelease)
	require.Equal(t, exitOK, first.code, first.stderr)
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(tr.url+"/"),
		chromedp.WaitVisible(`#graph .state.current[data-state="WaitForHealthy"]`, chromedp.ByQuery),
	), "the first deploy holds the lock")
	rel, err := release.ReadFile(deployTestRelease)
	require.NoError(t, err)
	rel.ReleaseID, rel.CreatedAt = "r2", tr.clk.Now()
	raw, err := json.Marshal(rel)
	require.NoError(t, err)
	second, err := tr.StartRelease(context.Background(), raw)
	require.NoError(t, err)
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(tr.url+"/#execution="+url.QueryEscape(second.ARN())),
		untilJS(titleNames(second.Describe().Name, "FAILED"), shownWithin),
	))

	detail := func(click string) (title, fields string) {
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Click(click, chromedp.ByQuery),
			chromedp.WaitVisible("#detail", chromedp.ByQuery),
			chromedp.Text("#detail-title", &title, chromedp.ByQuery),
			chromedp.Text("#detail-fields", &fields, chromedp.ByQuery),
		))
		return title, fields
	}
	title, fields := detail(`#graph .state[data-state="Validate"]`)
	assert.Contains(t, title, "Validate")
	assert.Contains(t, fields, `"services": {`, "Validate's input is the release")
	assert.Contains(t, fields, `"release_sha256": `, "Validate's output is the State")

	title, fields = detail(`#graph .state[data-state="Lock"]`)
	keepScreenshot(t, ctx, "console-failed.png")
	assert.Contains(t, title, "Lock")
	assert.Contains(t, fields, "error")
	assert.Contains(t, fields, "error\nLockExistsError", "the error Lock failed with")
	assert.Contains(t, fields, `"errorMessage": "lock on coinbase/deploy-test/development is held by release`, "its cause, indented")

	title, fields = detail(`#history button[data-event="1"]`)
	assert.Contains(t, title, "ExecutionStarted")
	assert.Contains(t, fields, `"project_name": "coinbase/deploy-test"`, "the execution's input")

	title, fields = detail(`#graph .state[data-state="Bake"]`)
	assert.Contains(t, title, "not visited")
	assert.Empty(t, fields)
}

// TestConsoleShowsHealthAndBake: during a deploy, the console shows each
// service's healthy instances of its target and its stability window,
// then, the release healthy, the window held and the bake's time left
// counting down on the region's clock, from the execution's latest state
// document; and each load balancer's healthy instances and cut
// connections. The health check's state document, clicked, shows each
// service's health plain, not packed.
func TestConsoleShowsHealthAndBake(t *testing.T) {
	ctx := browser(t)
	tr := startRegion(t, "deploy-test.json")
	var entered atomic.Value
	tr.observe(func(_ string, ev asl.Event) {
		if ev.StateEntered != nil {
			entered.Store(ev.StateEntered.Name)
		}
	})
	hold := tr.Hold()
	defer hold()
	rel, err := release.ReadFile(deployTestRelease)
	require.NoError(t, err)
	rel.ReleaseID, rel.CreatedAt, rel.BakeSeconds = "r1", tr.clk.Now(), 1800
	raw, err := json.Marshal(rel)
	require.NoError(t, err)
	_, err = tr.StartRelease(context.Background(), raw)
	require.NoError(t, err)

	var health string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(tr.url+"/"),
		chromedp.WaitVisible(`#health tr[data-service="web"]`, chromedp.ByQuery),
		chromedp.Text(`#health`, &health, chromedp.ByQuery),
	))
	assert.Contains(t, health, "0/1", "no instance healthy yet, of the one the target needs")
	assert.Contains(t, health, "bake of 30m00s once healthy")
	assert.Contains(t, health, "window 1m00s", "the stability window, not begun")

	for i := 0; i < 100 && entered.Load() != "WaitForBake"; i++ {
		require.NoError(t, tr.Pass(context.Background(), 10*time.Second))
	}
	require.Equal(t, "WaitForBake", entered.Load(), "the release is healthy and bakes")
	leftJS := `(() => { const m = /bake: (\d+)m(\d\d)s left/.exec(document.getElementById("countdowns").textContent); return m ? 60 * Number(m[1]) + Number(m[2]) : -1; })()`
	var left1, left2 int
	var lbs string
	require.NoError(t, chromedp.Run(ctx,
		untilJS(leftJS+` > 0`, shownWithin),
		chromedp.Evaluate(leftJS, &left1),
		chromedp.Text(`#health`, &health, chromedp.ByQuery),
		chromedp.Text(`#world .registrations`, &lbs, chromedp.ByQuery),
	))
	keepScreenshot(t, ctx, "console-bake.png")
	assert.Contains(t, health, "1/1", "the one instance healthy")
	assert.Regexp(t, `held \dm\d\ds of 1m00s, stable`, health, "the stability window, held")
	assert.LessOrEqual(t, left1, 1800)
	assert.Regexp(t, `coinbase-deploy-test-web-elb\s+1/1`, lbs, "the load balancer's healthy instances")
	assert.Contains(t, lbs, "0 cut")

	require.NoError(t, tr.Pass(context.Background(), 5*time.Second))
	require.NoError(t, chromedp.Run(ctx,
		untilJS(fmt.Sprintf(`%s > 0 && %s < %d`, leftJS, leftJS, left1), shownWithin),
		chromedp.Evaluate(leftJS, &left2),
	))
	assert.InDelta(t, left1-5, left2, 1, "the bake counts down on the region's clock")

	var fields string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Click(`#graph .state[data-state="CheckHealthy"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#detail", chromedp.ByQuery),
		chromedp.Text("#detail-fields", &fields, chromedp.ByQuery),
	))
	assert.Regexp(t, `"services": \{\s+"web": \{[^}]*"launched": 1,`, fields, "the health check's output shows each service's health plain")
	assert.NotContains(t, fields, `_z"`, "no packed part is shown")
}

// TestConsoleShowsAPromotion: a promotion pinned in the URL is drawn as
// the promotion's branch (no deploy state), in its own list; while its
// wave deploys, the Map state Wave is its current state (the states of
// the wave's iterations are not the machine's), and the nested deploy
// the wave started is listed among the deploys.
func TestConsoleShowsAPromotion(t *testing.T) {
	ctx := browser(t)
	tr := startRegion(t, "deploy-test.json")
	addStagingAlarm(t, tr)
	reg := tr.ferry(t, "pipeline", "register", "--local", deployTestPipeline)
	require.Equal(t, exitOK, reg.code, reg.stderr)
	waves := make(chan func(), 1)
	var once sync.Once
	tr.observe(func(_ string, ev asl.Event) {
		if ev.StateEntered != nil && ev.StateEntered.Name == "DeployTarget" {
			once.Do(func() { waves <- tr.Hold() })
		}
	})
	arn := startPromotion(t, tr)
	defer (<-waves)()

	var states, deploys []string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(tr.url+"/#execution="+url.QueryEscape(arn)),
		chromedp.WaitVisible(`#graph .state.current[data-state="Wave"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#promotions li button[aria-current="true"]`, chromedp.ByQuery),
		untilJS(`document.querySelectorAll("#deploys li").length > 0`, shownWithin),
		chromedp.Evaluate(`[...document.querySelectorAll("#graph .state")].map((e) => e.dataset.state)`, &states),
		chromedp.Evaluate(`[...document.querySelectorAll("#deploys li .name")].map((e) => e.textContent)`, &deploys),
	))
	keepScreenshot(t, ctx, "console-promotion.png")
	assert.Contains(t, states, "Gate")
	assert.NotContains(t, states, "Validate", "a deploy's state")
	assert.NotContains(t, states, "StartTarget", "a state of the wave's iterations")
	assert.Len(t, deploys, 1, "the wave's nested deploy")
}

// TestConsoleSeesAnOlderDeployEnd: the executions list is re-read at each
// refresh as far as every execution that was running, so a deploy that
// ends after a hundred newer reconcile passes is shown ended.
func TestConsoleSeesAnOlderDeployEnd(t *testing.T) {
	ctx := browser(t)
	tr := startRegion(t, "deploy-test.json")
	hold := tr.Hold()
	defer hold()
	res := tr.ferry(t, "deploy", "--local", "--no-wait", deployTestRelease)
	require.Equal(t, exitOK, res.code, res.stderr)
	name := naming.ExecutionName("coinbase/deploy-test", "development", releaseIDOf(t, res.stdout))
	for i := range 120 {
		_, _, err := tr.Start(fmt.Sprintf("reconcile-%03d", i), json.RawMessage(`{"reconcile_pass": {}}`))
		require.NoError(t, err)
	}
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(tr.url+"/"),
		untilJS(titleNames(name, "RUNNING"), 30*time.Second),
		untilJS(`document.getElementById("queries").dataset.total === "120"`, shownWithin),
	))
	hold()
	require.NoError(t, chromedp.Run(ctx,
		untilJS(titleNames(name, "SUCCEEDED"), 30*time.Second),
		chromedp.WaitVisible(`#deploys li .status.SUCCEEDED`, chromedp.ByQuery),
	), "the deploy's end is seen")
}

// TestConsoleShowsCutConnections: an instance killed from outside ferry
// while its load balancer routes to it cuts connections there, and its
// last healthy instance gone, the load balancer goes dark: the console
// says both, in red, on the load balancer's row.
func TestConsoleShowsCutConnections(t *testing.T) {
	ctx := browser(t)
	tr := startRegion(t, "deploy-test.json")
	res := tr.ferry(t, "deploy", "--local", deployTestRelease)
	require.Equal(t, exitOK, res.code, res.stderr)
	group := naming.GroupName("coinbase/deploy-test", "development", "web", releaseIDOf(t, res.stdout))
	instances := tr.groups("111111111111", "us-east-1")
	require.Equal(t, 1, instances[group])
	var killed string
	for _, a := range tr.World().Snapshot().Accounts {
		for _, g := range a.Groups {
			if g.Name == group {
				killed = g.Instances[0].ID
			}
		}
	}
	_, err := tr.Meddle(context.Background(), region.Meddling{Action: region.MeddleKillInstance, Instance: killed})
	require.NoError(t, err)

	var row, class string
	const elb = `#world tr[data-registration="coinbase-deploy-test-web-elb"]`
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(tr.url+"/"),
		chromedp.WaitVisible(elb+` td.cut`, chromedp.ByQuery),
		chromedp.Text(elb, &row, chromedp.ByQuery),
		chromedp.AttributeValue(elb+` td:last-child`, "class", &class, nil, chromedp.ByQuery),
	))
	assert.Regexp(t, `\d+ cut \(1 went dark\)`, row)
	assert.Equal(t, "cut", class, "in red")
}
