package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// consoleScreenshot is where -update writes the console's screenshot, the
// one the README shows.
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
// README's).
func TestConsoleInABrowser(t *testing.T) {
	ctx := browser(t)
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
}

// screenshot saves the page as a PNG: with -update, the README's.
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
