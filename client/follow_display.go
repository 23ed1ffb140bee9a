package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/health"
	"github.com/ferryhq/ferry/internal/tuning"
)

// displayMode is how a follower shows updates.
type displayMode int

const (
	// modePlain prints one line per change: for logs and pipes.
	modePlain displayMode = iota
	// modeLive is for a terminal: the health report is one block redrawn
	// in place.
	modeLive
	// modeJSON prints one JSON object per update.
	modeJSON
)

// ANSI sequences used in modeLive.
const (
	ansiReset   = "\x1b[0m"
	ansiBold    = "\x1b[1m"
	ansiRed     = "\x1b[31m"
	ansiGreen   = "\x1b[32m"
	ansiYellow  = "\x1b[33m"
	ansiDim     = "\x1b[2m"
	ansiUpClear = "\x1b[%dA\x1b[J" // cursor up n lines, clear to the end of the screen
	ansiClearLn = "\r\x1b[2K"      // cursor to the start of the line, clear the line
)

// display writes updates for a person or a program.
type display struct {
	w     io.Writer
	mode  displayMode
	color bool
	// block is how many lines the last health block took, when it was the
	// last thing written (modeLive redraws it in place).
	block int
	// width is the terminal's width in columns (modeLive; 0 when unknown).
	// A live health line is cut to fit it: a line that wrapped would take
	// two rows, and the redraw, moving up one row a line, would leave
	// fragments.
	width int
	// timeout is how long the followed execution may take, from its
	// start (0: unknown); the ticking clock counts down to it.
	timeout time.Duration
	// started is when the execution started and state the state it is in,
	// as the updates shown say.
	started time.Time
	state   string
	// shown is what was last shown of each service's health (modePlain
	// shows a service again only when it changes).
	shown map[string]shownHealth
	// ticking says the last thing written is the clock line (modeLive),
	// without a newline: the next write replaces it.
	ticking bool
	// bakeEnd is when the bake under way ends, as Bake's last report
	// says; retireSince when the clean-up state under way was entered
	// (its retirement's time bound counts from about then) and retiring
	// its groups' phases as last reported.
	bakeEnd     time.Time
	retireSince time.Time
	retiring    []execution.RetiringGroup
	// clock is the client's clock (Env.Now): a log (modePlain) gets a
	// line, and a JSON stream an object, at least every keepAlive of it
	// while ferry waits; nil, never.
	// lastOut is when the last line was written.
	clock   func() time.Time
	lastOut time.Time
	// exitCode is the exit code the command returns for an outcome, shown
	// as the --json outcome's exit_code; nil means ferry deploy's
	// (exitCodeOf).
	exitCode func(progress) int
	// groups are the groups the followed execution created and retired,
	// read once it succeeded for the --json outcome; nil: none said.
	groups func() (created, retired []string)
}

// newDisplay picks the mode: JSON when asked, live on a terminal, plain
// otherwise. Colour only on a terminal, and never when NO_COLOR is set or
// TERM is dumb.
func newDisplay(env Env, asJSON bool) *display {
	d := &display{w: env.Stdout, mode: modePlain, clock: env.Now}
	if asJSON {
		d.mode = modeJSON
		return d
	}
	if d.width = terminalWidth(env.Stdout); d.width > 0 {
		d.mode = modeLive
		d.color = env.Getenv("NO_COLOR") == "" && env.Getenv("TERM") != "dumb"
	}
	return d
}

// show writes one update.
func (d *display) show(u progress) {
	d.follow(u)
	d.untick()
	d.wrote()
	if d.mode == modeJSON {
		d.showJSON(u)
		return
	}
	switch u.Event {
	case updateState:
		d.line(u.Elapsed, d.paint(ansiBold, oneLine(u.State)))
	case updateHealth:
		d.showHealth(u)
		return
	case updateRetire:
		for _, l := range slices.Concat(restoreLines(u.Restoring), retireLines(u.Retiring)) {
			d.line(u.Elapsed, l)
		}
	case updateBake:
		d.line(u.Elapsed, bakeLine(u.Bake))
		d.showAnalysis(u)
	case updateThrottled:
		d.line(u.Elapsed, d.paint(ansiYellow, fmt.Sprintf("%s: AWS throttled its calls; it goes on in %ds", u.State, u.WaitSeconds)))
	case updateStep:
		for _, l := range stepLines(u.Services) {
			d.line(u.Elapsed, l)
		}
	case updateError:
		msg := "error: " + describeError(u.Error, u.Cause)
		if u.State != "" {
			msg = oneLine(u.State) + " " + msg
		}
		d.line(u.Elapsed, d.paint(ansiYellow, msg))
	case updateOutcome:
		colour := ansiRed
		if u.End == execution.EndSuccess {
			colour = ansiGreen
		}
		d.line(u.Elapsed, d.paint(colour, describeOutcome(u)))
	default:
		return
	}
	d.block = 0
}

// showJSON writes u as one JSON event (progressEvent); an outcome carries
// the exit code the command returns for it and, of a success, the groups
// it created and retired.
func (d *display) showJSON(u progress) {
	var code int
	var created, retired []string
	if u.Event == updateOutcome {
		code = exitCodeOf(u)
		if d.exitCode != nil {
			code = d.exitCode(u)
		}
		if u.End == execution.EndSuccess && d.groups != nil {
			created, retired = d.groups()
		}
	}
	k, body := progressEvent(u, code, created, retired)
	d.event(k, body)
}

// showHealth writes a health report: on a terminal the whole block,
// redrawn in place; in a log the services whose line changed.
func (d *display) showHealth(u progress) {
	prefix := fmt.Sprintf("%6s    ", formatElapsed(u.Elapsed))
	room := 0
	if d.width > 0 {
		room = max(d.width-1-len(prefix), 1)
	}
	lines := healthLines(u, room)
	if d.mode == modeLive && d.block > 0 {
		fmt.Fprintf(d.w, ansiUpClear, d.block)
	}
	for i, l := range lines {
		if d.mode == modePlain && !d.changed(u.Services[i], u.At) {
			continue // a log gets the services that changed, not the whole block again
		}
		fmt.Fprintln(d.w, fitWidth(prefix+l, d.width))
	}
	if d.mode == modeLive {
		d.block = len(lines)
	}
	if u.Analysis != nil {
		d.showAnalysis(u)
		d.block = 0 // the analysis's lines end the block: the next report starts anew
	}
}

// showAnalysis writes the canary analysis an update carries, if any.
func (d *display) showAnalysis(u progress) {
	if u.Analysis == nil {
		return
	}
	for _, l := range analysisLines(u.Analysis) {
		d.line(u.Elapsed, l)
	}
}

// message writes a line that is not an update (what the command is doing).
// In JSON mode it is an object {"event":"message","message":...}.
func (d *display) message(format string, args ...any) {
	d.untick()
	d.wrote()
	msg := fmt.Sprintf(format, args...)
	if d.mode == modeJSON {
		d.event(evMessage, messageEvent{Message: msg})
		return
	}
	fmt.Fprintln(d.w, msg)
	d.block = 0
}

// shownHealth is what a health line says of a service, but for the
// countdown to its stability: its counts, and whether it is stable.
type shownHealth struct {
	counts serviceCounts
	stable bool
}

// changed reports whether s, at t, says something other than what was
// last shown of its service, and remembers it.
func (d *display) changed(s serviceCounts, t time.Time) bool {
	now := shownHealth{counts: s, stable: health.Stable(s.ServiceHealth, t)}
	prev, seen := d.shown[s.Name]
	if d.shown == nil {
		d.shown = make(map[string]shownHealth)
	}
	d.shown[s.Name] = now
	return !seen || !sameCounts(prev.counts, now.counts) || prev.stable != now.stable
}

// follow remembers of u what the clock line says: when the execution
// started, the state it is in, when a bake ends, where a retirement
// stands.
func (d *display) follow(u progress) {
	if d.started.IsZero() && !u.At.IsZero() {
		d.started = u.At.Add(-u.Elapsed)
	}
	switch u.Event {
	case updateStarted:
		d.started = u.At
	case updateState:
		d.state = u.State
		if u.State == execution.TaskCleanUpSuccess || u.State == execution.TaskCleanUpFailure {
			d.retireSince, d.retiring = u.At, nil
		}
	case updateHealth:
		d.state = u.State
	case updateBake:
		d.bakeEnd = u.At.Add(time.Duration(u.Bake.LeftSeconds) * time.Second)
	case updateRetire:
		d.retiring = u.Retiring
	}
}

// keepAlive is the longest a log goes without a line while ferry waits:
// CI systems end a job that prints nothing for ten minutes.
const keepAlive = 30 * time.Second

// tick shows that the follower is alive while nothing changes: the time
// since the execution started as of now, what it waits for and how long
// the state machine will wait for it (waitText). On a terminal the line
// is replaced by the next tick or the next thing written; in a log it is
// written when keepAlive has passed without a line.
func (d *display) tick(now time.Time) {
	if d.started.IsZero() {
		return
	}
	d.waiting(now.Sub(d.started), d.waitText(now))
}

// waiting shows text, after elapsed: on a terminal as the clock line, in
// place of the last one; in a log as a line, and under --json as an
// object {"event":"waiting","elapsed_seconds":N,"waiting":TEXT}, when
// keepAlive of the client's clock has passed since the last.
func (d *display) waiting(elapsed time.Duration, text string) {
	line := fmt.Sprintf("%6s  %s", formatElapsed(elapsed), text)
	if d.mode == modeLive {
		if d.ticking {
			fmt.Fprint(d.w, ansiClearLn)
		}
		fmt.Fprint(d.w, d.paint(ansiDim, fitWidth(line, d.width)))
		d.ticking = true
		return
	}
	if d.clock == nil || d.clock().Sub(d.lastOut) < keepAlive {
		return
	}
	d.wrote()
	if d.mode == modeJSON {
		d.event(evWaiting, waitingEvent{ElapsedSeconds: elapsed.Seconds(), Waiting: text})
		return
	}
	fmt.Fprintln(d.w, line)
}

// nextTick is how long until the display has something to tick: a
// second on a terminal, what is left of keepAlive elsewhere (at least a
// second).
func (d *display) nextTick() time.Duration {
	if d.mode == modeLive || d.clock == nil {
		return time.Second
	}
	return max(keepAlive-d.clock().Sub(d.lastOut), time.Second)
}

// wrote notes that a line was written now.
func (d *display) wrote() {
	if d.clock != nil {
		d.lastOut = d.clock()
	}
}

// waitText says what the execution waits for at now, in the state it is
// in, and how long the state machine will wait for it: the bake's end
// during Bake, a retirement's time bound during a clean-up, and until it
// is healthy the release's timeout (which covers only that).
func (d *display) waitText(now time.Time) string {
	switch d.state {
	case "":
		return d.withTimeout("waiting", now)
	case execution.TaskBake:
		if d.bakeEnd.IsZero() {
			return "baking"
		}
		if left := d.bakeEnd.Sub(now); left > 0 {
			return "baking; bake ends in " + formatElapsed(left)
		}
		return "baking; bake ending"
	case execution.TaskCleanUpSuccess, execution.TaskCleanUpFailure:
		return d.retireText(now)
	case execution.TaskCheckHealthy:
		return d.withTimeout("waiting to be healthy", now)
	case execution.TaskValidate, execution.TaskLock, execution.TaskValidateResources, execution.TaskPublish,
		execution.TaskDeploy, execution.TaskNextStep:
		return d.withTimeout("waiting in "+oneLine(d.state), now)
	}
	return "waiting in " + oneLine(d.state)
}

// withTimeout is text and how long until the release's timeout.
func (d *display) withTimeout(text string, now time.Time) string {
	switch left := d.timeout - now.Sub(d.started); {
	case d.timeout <= 0:
		return text
	case left > 0:
		return text + "; timeout in " + formatElapsed(left)
	}
	return text + "; timeout passed"
}

// retireText says what a clean-up waits for (the phases its groups are
// in) and how long until its time bound, tuning.RetireTimeout from about
// when it began.
func (d *display) retireText(now time.Time) string {
	text := "retiring"
	if d.state == execution.TaskCleanUpFailure {
		text = "cleaning up"
	}
	var phases []string
	for _, g := range d.retiring {
		if p := strings.ReplaceAll(oneLine(g.Phase), "_", " "); !slices.Contains(phases, p) {
			phases = append(phases, p)
		}
	}
	if len(phases) > 0 {
		text += ": " + strings.Join(phases, ", ")
	}
	if d.retireSince.IsZero() {
		return text
	}
	return text + "; bound in " + formatElapsed(d.retireSince.Add(tuning.RetireTimeout).Sub(now))
}

// ticks reports whether tick may show anything: on a terminal, and in a
// log or a JSON stream that must not go silent.
func (d *display) ticks() bool { return d.mode == modeLive || d.clock != nil }

// untick clears the clock line, when it is the last thing written, so
// what comes next takes its place.
func (d *display) untick() {
	if d.ticking {
		fmt.Fprint(d.w, ansiClearLn)
		d.ticking = false
	}
}

// event writes body as one JSON object of kind k, on one line.
func (d *display) event(k eventKind, body any) {
	_ = writeEvent(d.w, k, body, false) // a write error on stdout has nowhere better to go
}

// line writes text after the elapsed time; a text of several lines has
// its later lines aligned under its first.
func (d *display) line(elapsed time.Duration, text string) {
	fmt.Fprintf(d.w, "%6s  %s\n", formatElapsed(elapsed), strings.ReplaceAll(text, "\n", "\n        "))
}

func (d *display) paint(colour, text string) string {
	if !d.color {
		return text
	}
	return colour + text + ansiReset
}

// healthLines formats a health report, one aligned line per service, in
// the longest form whose lines are all at most room columns (0: no
// limit): "web  launched 3  healthy 2  terminating 0  target 2", then
// how the service stands against its stability window at the report's
// time ("stable in 45s", "stable"), the instances of its new group that
// terminated during the deploy, or that AWS does not show the group yet.
// Narrower, the words go before the numbers that matter: "web  healthy
// 2/2  launched 3  term 0  stable in 45s", then "web  2/2 healthy
// stable in 45s", then the service's name is cut.
func healthLines(u progress, room int) []string {
	lines := fullHealthLines(u)
	for form := range 2 {
		if room <= 0 || widest(lines) <= room {
			return lines
		}
		lines = shortHealthLines(u, form, 0)
	}
	if over := widest(lines) - room; over > 0 {
		nameW := 0
		for _, s := range u.Services {
			nameW = max(nameW, utf8.RuneCountInString(oneLine(s.Name)))
		}
		lines = shortHealthLines(u, 1, max(nameW-over, 4))
	}
	return lines
}

// widest is the width of the widest of lines.
func widest(lines []string) int {
	w := 0
	for _, l := range lines {
		w = max(w, utf8.RuneCountInString(l))
	}
	return w
}

// shortHealthLines are the narrower forms of health lines: form 0
// "web  healthy 2/2  launched 3  term 0  step 1/3  stable in 45s", form
// 1 "web  2/2 healthy  stable in 45s"; names cut to nameMax (0: whole).
func shortHealthLines(u progress, form, nameMax int) []string {
	rows := make([][]string, 0, len(u.Services))
	for _, s := range u.Services {
		name := oneLine(s.Name)
		if nameMax > 0 && utf8.RuneCountInString(name) > nameMax {
			name = string([]rune(name)[:nameMax-1]) + "…"
		}
		cells := []string{name, fmt.Sprintf("healthy %d/%d", s.Healthy, s.Target), fmt.Sprintf("launched %d", s.Launched), fmt.Sprintf("term %d", s.Terminating)}
		if form == 1 {
			cells = []string{name, fmt.Sprintf("%d/%d healthy", s.Healthy, s.Target)}
		}
		if s.Steps > 0 {
			cells = append(cells, fmt.Sprintf("step %d/%d", s.Step, s.Steps))
		}
		rows = append(rows, append(cells, windowNote(s.ServiceHealth, u.At)))
	}
	return alignCells(trimEmpty(rows))
}

// fullHealthLines are health lines in their longest form.
func fullHealthLines(u progress) []string {
	nameW, launchedW, healthyW, termW, targetW := 0, 1, 1, 1, 1
	for _, s := range u.Services {
		nameW = max(nameW, len(oneLine(s.Name)))
		launchedW = max(launchedW, len(strconv.Itoa(s.Launched)))
		healthyW = max(healthyW, len(strconv.Itoa(s.Healthy)))
		termW = max(termW, len(strconv.Itoa(s.Terminating)))
		targetW = max(targetW, len(strconv.Itoa(s.Target)))
	}
	lines := make([]string, 0, len(u.Services))
	for _, s := range u.Services {
		line := fmt.Sprintf("%-*s  launched %*d  healthy %*d  terminating %*d  target %*d",
			nameW, oneLine(s.Name), launchedW, s.Launched, healthyW, s.Healthy, termW, s.Terminating, targetW, s.Target)
		if s.Steps > 0 {
			line += fmt.Sprintf("  canary step %d of %d", s.Step, s.Steps)
		}
		if note := windowNote(s.ServiceHealth, u.At); note != "" {
			line += "  " + note
		}
		lines = append(lines, strings.TrimRight(line, " "))
	}
	return lines
}

// retireLines formats where the retirement of the previous groups stands,
// one line per group still standing: "retiring GROUP: draining from its
// load balancers", "... scaling in: 3 instances, 2 hooks pending".
func retireLines(groups []execution.RetiringGroup) []string {
	lines := make([]string, 0, len(groups))
	for _, g := range groups {
		var what string
		switch g.Phase {
		case execution.PhaseDraining:
			what = "draining from its load balancers"
		case execution.PhaseScalingIn:
			what = fmt.Sprintf("scaling in: %d %s", g.Instances, plural(g.Instances, "instance", "instances"))
			if g.HooksPending > 0 {
				what += fmt.Sprintf(", %d termination %s pending", g.HooksPending, plural(g.HooksPending, "hook", "hooks"))
			}
		case execution.PhaseDeleting:
			what = "empty, deleting"
		default:
			what = oneLine(g.Phase)
		}
		lines = append(lines, "retiring "+oneLine(g.Name)+": "+what)
	}
	return lines
}

// restoreLines formats where a rollback stands, one line per previous
// group not healthy yet: "rolling back: GROUP back in its load balancers,
// 1 of 2 instances healthy".
func restoreLines(groups []execution.RestoringGroup) []string {
	lines := make([]string, 0, len(groups))
	for _, g := range groups {
		lines = append(lines, fmt.Sprintf("rolling back: %s back in its load balancers, %d of %d %s healthy",
			oneLine(g.Name), g.Healthy, g.Want, plural(g.Want, "instance", "instances")))
	}
	return lines
}

// stepLines say the step each canary took: "canary: web at step 2 of 3,
// 2 instances (1 healthy needed)", or "... the whole group" at the last.
func stepLines(services []serviceCounts) []string {
	lines := make([]string, 0, len(services))
	for _, s := range services {
		what := fmt.Sprintf("%d %s (%d healthy needed)", s.StepDesired, plural(s.StepDesired, "instance", "instances"), s.Target)
		if s.Step == s.Steps {
			what = "the whole group, " + what
		}
		lines = append(lines, fmt.Sprintf("canary: %s at step %d of %d, %s", oneLine(s.Name), s.Step, s.Steps, what))
	}
	return lines
}

// bakeLine says where the bake stands: "baking: 9m left; standing by:
// GROUP, GROUP".
func bakeLine(b *execution.Bake) string {
	left := (time.Duration(b.LeftSeconds) * time.Second).String()
	if b.LeftSeconds >= 60 {
		left = fmt.Sprintf("%dm", (b.LeftSeconds+59)/60)
	}
	line := "baking: " + left + " left"
	if len(b.Standby) == 0 {
		return line + "; no previous group to stand by"
	}
	names := make([]string, len(b.Standby))
	for i, n := range b.Standby {
		names[i] = oneLine(n)
	}
	return line + "; standing by, ready to serve again: " + strings.Join(names, ", ")
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// windowNote says how a service stands against its stability window at
// t: "" below its target.
func windowNote(s execution.ServiceHealth, t time.Time) string {
	var notes []string
	switch {
	case s.Missing:
		notes = append(notes, "group not visible yet")
	case health.Stable(s, t):
		notes = append(notes, "stable")
	case health.Healthy(s) && s.HealthySince != nil:
		notes = append(notes, "stable in "+formatSeconds(health.StableIn(s, t)))
	}
	if s.Terminated > 0 {
		notes = append(notes, fmt.Sprintf("terminated %d", s.Terminated))
	}
	return strings.Join(notes, "  ")
}

// formatSeconds is a short wait: "45s" under ten minutes, else rounded to
// the minute ("1h5m0s").
func formatSeconds(d time.Duration) string {
	if s := int(math.Ceil(d.Seconds())); s < 600 {
		return strconv.Itoa(s) + "s"
	}
	return d.Round(time.Minute).String()
}

// formatElapsed is m:ss, or h:mm:ss from an hour on.
func formatElapsed(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// fitWidth cuts line to fewer than width columns (one a rune: health lines
// are ASCII but for a service's name, which release validation keeps to
// ASCII too), ending it with "…" when cut. The last column stays free, as
// some terminals wrap a line that fills it. A width of 0 (unknown) or too
// narrow to say anything leaves line whole.
func fitWidth(line string, width int) string {
	const narrowest = 12
	if width < narrowest {
		return line
	}
	runes := []rune(line)
	if len(runes) < width {
		return line
	}
	return string(runes[:width-2]) + "…"
}
