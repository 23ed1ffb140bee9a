//go:build linux

package main

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ferryhq/ferry/internal/execution"
)

// openPTY opens a pseudo-terminal of cols columns: the terminal side a
// command writes to, and everything written to it as read on the other
// side (returned once the terminal side is closed).
func openPTY(t *testing.T, cols int) (tty *os.File, screen func() string) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { _ = ptm.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	tty, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	require.NoError(t, unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: uint16(cols)}))
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(&out, ptm) // ends with EIO once the terminal side is closed
	}()
	return tty, func() string {
		_ = tty.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the pseudo-terminal did not drain")
		}
		return strings.ReplaceAll(out.String(), "\r\n", "\n") // the line discipline's ONLCR
	}
}

// ansiRe matches the escape sequences the live display writes.
var ansiRe = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

// TestLiveProgressInATerminal: in a pseudo-terminal of 60, 80 and 200
// columns, ferry sees a terminal of that width (newDisplay) and every
// row it writes, health lines and the ticking clock line alike, fits in
// it (a row that wrapped would leave fragments at the next redraw); the
// clock line is always replaced in place, never left behind.
func TestLiveProgressInATerminal(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	long := strings.Repeat("service-", 6)
	for _, cols := range []int{60, 80, 200} {
		t.Run(strconv.Itoa(cols), func(t *testing.T) {
			tty, screen := openPTY(t, cols)
			d := newDisplay(Env{Stdout: tty, Getenv: func(string) string { return "" }, Now: func() time.Time { return t0 }}, false)
			require.Equal(t, modeLive, d.mode, "a terminal gets the live display")
			require.Equal(t, cols, d.width)
			d.timeout = 10 * time.Minute
			d.show(progress{Event: updateStarted, At: t0})
			d.show(progress{Event: updateState, State: execution.TaskCheckHealthy, At: at(5), Elapsed: 5 * time.Second})
			for i := range 3 {
				d.show(progress{Event: updateHealth, State: execution.TaskCheckHealthy, At: at(10 + 15*i), Elapsed: time.Duration(10+15*i) * time.Second,
					Services: []serviceCounts{{Name: long, ServiceHealth: counts(12, i, 1, 10)}, {Name: "web", ServiceHealth: counts(3, i, 0, 2)}}})
				for s := range 5 {
					d.tick(at(11 + 15*i + s))
				}
			}
			d.show(progress{Event: updateState, State: execution.TaskCleanUpSuccess, At: at(60), Elapsed: time.Minute})
			d.show(progress{Event: updateRetire, State: execution.TaskCleanUpSuccess, At: at(61), Elapsed: 61 * time.Second,
				Retiring: []execution.RetiringGroup{{Name: "coinbase/deploy-test/development/" + long + "/20261125T100000Z-abcdef", Phase: execution.PhaseScalingIn, Instances: 3, HooksPending: 2}}})
			d.tick(at(70))
			d.waiting(time.Minute, "waiting for the lock; giving up in 29:00; held by release 20261125T100000Z-abcdef (coinbase/deploy-test development)")
			d.show(progress{Event: updateOutcome, Status: statusSucceeded, End: execution.EndSuccess, At: at(80), Elapsed: 80 * time.Second})
			out := screen()

			assert.Equal(t, 5*3+2, strings.Count(out, ansiClearLn), "each of the 17 clock lines is cleared by what comes next")
			assert.Contains(t, out, "  0:15  waiting to be healthy; timeout in 9:45", "the clock line says what it waits for, and for how long, at every width")
			assert.Contains(t, out, "  1:10  retiring: scaling in; bound in 1:59:50")
			assert.Contains(t, out, "  1:00  waiting for the lock; giving up in 29:00")
			assert.True(t, strings.HasSuffix(ansiRe.ReplaceAllString(out, ""), "\r  1:20  Success\n"), "the outcome replaces the clock line, on a line of its own: %q", out[max(0, len(out)-80):])
			for _, row := range regexp.MustCompile(`\n|\r\x1b\[2K|\x1b\[\d+A\x1b\[J`).Split(out, -1) {
				if row = ansiRe.ReplaceAllString(row, ""); strings.HasPrefix(row, "  ") && strings.Contains(row, "launched") {
					assert.Less(t, utf8.RuneCountInString(row), cols, "a live health line fits: %q", row)
				}
				if strings.Contains(row, "waiting") || strings.Contains(row, "bound at") {
					assert.Less(t, utf8.RuneCountInString(row), cols, "the clock line fits: %q", row)
				}
			}
		})
	}
}
