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

	"github.com/ferryhq/ferry/client/help"
	"github.com/ferryhq/ferry/internal/execution"
)

// screenEnd is written to the terminal side after everything under test:
// the screen is whatever the other side read before it. Waiting for it,
// rather than for the read error that follows the terminal side's close,
// keeps the screen whole however the kernel schedules the pty's buffer
// flush: a close racing a flush not yet run drops what was written.
const screenEnd = "\x1b]ferry-end-of-screen\x07"

// openPTY opens a pseudo-terminal of cols columns: the terminal side a
// command writes to, and everything written to it as read on the other
// side, returned once screenEnd has come through (the terminal side is
// closed then).
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
	type screenRead struct {
		out string
		err error // the read error that came before screenEnd, if one did
	}
	read := make(chan screenRead, 1)
	go func() {
		// The reader runs beside the writer from the start, so a long
		// page never fills the pty's buffer and blocks the command.
		var out bytes.Buffer
		buf := make([]byte, 4096)
		for {
			n, err := ptm.Read(buf)
			out.Write(buf[:n])
			if before, _, found := bytes.Cut(out.Bytes(), []byte(screenEnd)); found {
				read <- screenRead{out: string(before)}
				return
			}
			if err != nil {
				read <- screenRead{out: out.String(), err: err}
				return
			}
		}
	}()
	return tty, func() string {
		t.Helper()
		_, err := io.WriteString(tty, screenEnd)
		require.NoError(t, err)
		var r screenRead
		select {
		case r = <-read:
		case <-time.After(10 * time.Second):
			t.Fatal("the pseudo-terminal did not drain")
		}
		_ = tty.Close()
		require.NoError(t, r.err, "the screen ended before screenEnd came through: %q", r.out)
		return strings.ReplaceAll(r.out, "\r\n", "\n") // the line discipline's ONLCR
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
			since := at(40)
			d.show(progress{Event: updateHealth, State: execution.TaskCheckHealthy, At: at(55), Elapsed: 55 * time.Second, Healthy: true,
				Services: []serviceCounts{
					{Name: long, ServiceHealth: execution.ServiceHealth{Launched: 12, Healthy: 10, Target: 10, StableSeconds: 60, HealthySince: &since}},
					{Name: "web", ServiceHealth: execution.ServiceHealth{Launched: 3, Healthy: 2, Target: 2, StableSeconds: 60, HealthySince: &since}}}})
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
			checkGolden(t, "pty-live-"+strconv.Itoa(cols), ansiRe.ReplaceAllString(out, ""))
			healthRows := 0
			for _, row := range regexp.MustCompile(`\n|\r\x1b\[2K|\x1b\[\d+A\x1b\[J`).Split(out, -1) {
				if row = ansiRe.ReplaceAllString(row, ""); strings.HasPrefix(row, "  ") && strings.Contains(row, "healthy") && !strings.Contains(row, "waiting") {
					healthRows++
					assert.Less(t, utf8.RuneCountInString(row), cols, "a live health line fits: %q", row)
					assert.Regexp(t, `(healthy +\d+ .*target +(10|2)|\d+/(10|2) healthy|healthy \d+/(10|2))`, row, "a health line keeps the healthy count and the target: %q", row)
					assert.False(t, strings.HasSuffix(row, "…"), "a health line is shortened, not cut at its end: %q", row)
					if strings.HasPrefix(row, "  0:55") {
						assert.Contains(t, row, "stable in 45s", "a health line keeps the countdown to stable: %q", row)
					}
				}
				if strings.Contains(row, "waiting") || strings.Contains(row, "bound at") {
					assert.Less(t, utf8.RuneCountInString(row), cols, "the clock line fits: %q", row)
				}
			}
			assert.Equal(t, 4*2, healthRows, "every health line is on the screen")
		})
	}
}

// TestTablesInATerminal: ferry history and ferry list in a terminal of
// 60, 80 and 200 columns lay their tables out for its width: every row
// fits (none wraps into fragments), the columns that matter stay (the
// release and its outcome; the project, config, outcome and whether a
// deploy runs) and the others go, or are abbreviated, as the width
// shrinks.
func TestTablesInATerminal(t *testing.T) {
	tr := startRegion(t, "deploy-test.json")
	first := tr.ferry(t, "deploy", "--local", deployTestRelease)
	require.Equal(t, exitOK, first.code, first.stderr)
	require.Equal(t, exitOK, tr.ferry(t, "deploy", "--local", demoV2).code)
	require.Equal(t, exitOK, tr.ferry(t, "rollback", "--local", "coinbase/deploy-test", "development").code)
	running := tr.ferry(t, "deploy", "--local", "--no-wait", demoV2)
	require.Equal(t, exitOK, running.code, running.stderr)
	tr.untilLocked(t, "coinbase/deploy-test", "development")

	for _, cols := range []int{60, 80, 200} {
		for _, cmd := range [][]string{{"history", "--local", "coinbase/deploy-test", "development"}, {"list", "--local"}} {
			t.Run(cmd[0]+"-"+strconv.Itoa(cols), func(t *testing.T) {
				tty, screen := openPTY(t, cols)
				r := tr.ferryAt(t.Context(), func(env *Env) { env.Stdout = tty }, cmd...)
				require.Equal(t, exitOK, r.code, r.stderr)
				out := screen()
				lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
				require.Greater(t, len(lines), 1, out)
				for _, l := range lines {
					assert.Less(t, utf8.RuneCountInString(l), cols, "a row fits: %q", l)
				}
				if cmd[0] == "history" {
					assert.Regexp(t, `^RELEASE +OUTCOME`, lines[0])
					assert.Contains(t, out, "rollback to ", "the detail stays, cut if it must")
					assert.Contains(t, out, " running")
				} else {
					assert.Regexp(t, `^PROJECT +CONFIG +.*OUTCOME +RUNNING$`, lines[0])
					assert.Regexp(t, `running +yes`, lines[1])
				}
				if cols == 200 {
					assert.Contains(t, lines[0], map[string]string{"history": "VERSION", "list": "LATEST"}[cmd[0]], "a wide terminal gets every column")
				}
				checkGolden(t, "pty-"+cmd[0]+"-"+strconv.Itoa(cols), out)
			})
		}
	}
}

// TestHelpPageInATerminal: in a pseudo-terminal ferry help TOPIC lays the
// page out for the terminal's width, not as markdown: at 80 columns the
// exit-codes page is its golden file (help-exit-codes-tty.golden), and
// at 60 and 200 columns no line is wider than the terminal (at most
// maxPageWidth) but a code block's.
func TestHelpPageInATerminal(t *testing.T) {
	for _, tc := range []struct {
		cols  int
		topic string
	}{{80, "exit-codes"}, {60, "guarantees"}, {200, "statemachine"}} {
		t.Run(strconv.Itoa(tc.cols)+" "+tc.topic, func(t *testing.T) {
			tty, screen := openPTY(t, tc.cols)
			env := Env{Stdin: strings.NewReader(""), Stdout: tty, Stderr: io.Discard}
			require.NoError(t, newCLI(env).Run(t.Context(), []string{"help", tc.topic}))
			out := screen()
			assert.NotContains(t, out, "| code |", "no markdown table")
			assert.NotContains(t, out, "<!--", "no markdown comment")
			if tc.cols == 80 {
				checkGolden(t, "help-exit-codes-tty", out)
			}
			page, _ := help.Page(tc.topic)
			inCode := map[string]bool{}
			for _, l := range strings.Split(page, "\n") {
				inCode[strings.TrimSpace(l)] = true // a code line, if it is one, is kept as it is
			}
			for _, l := range strings.Split(out, "\n") {
				if n := utf8.RuneCountInString(l); n > min(tc.cols, maxPageWidth) {
					assert.True(t, inCode[strings.TrimSpace(l)] || !strings.Contains(strings.TrimSpace(l), " "), "a line of %d columns: %q", n, l)
				}
			}
		})
	}
}
