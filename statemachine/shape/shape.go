package shape

import "fmt"

// ErrorAll is the Amazon States Language's name for every error: a task's
// Otherwise catches it.
const ErrorAll = "States.ALL"

// Paths of the state document the machine reads and writes (see package
// execution).
const (
	// PathError is where every Catch stores the error it caught, and where
	// the failure end states read the error and its cause.
	PathError = "$.error"
	// PathPlan holds a plan's release (execution.PlanInput), PathDrift a
	// drift query's project-config (execution.DriftInput): the entry
	// Choice sends an input with one to its task.
	PathPlan  = "$.plan"
	PathDrift = "$.drift"
	// PathApprovalQuery holds an approval query (execution.ApprovalInput).
	PathApprovalQuery = "$.approval_query"
	// PathReconcile is a reconcile pass (execution.Reconcile): where it
	// is, whether it is done and how long to wait before its next page.
	PathReconcile            = "$.reconcile_pass"
	PathReconciled           = "$.reconcile_pass.done"
	PathReconcileWaitSeconds = "$.reconcile_pass.wait_seconds"
	// PathResources is ValidateResources' report (execution.Progress):
	// whether every resource was checked, and how long to wait before it
	// runs again when AWS throttled it.
	PathResources            = "$.resources"
	PathResourcesValid       = "$.resources.done"
	PathResourcesWaitSeconds = "$.resources.wait_seconds"
	// PathDeploy is Deploy's report (execution.Progress): whether the
	// release's groups are made, and how long to wait before Deploy runs
	// again when AWS throttled it.
	PathDeploy            = "$.deploy"
	PathDeployed          = "$.deploy.done"
	PathDeployWaitSeconds = "$.deploy.wait_seconds"
	PathHealth            = "$.health"
	PathHealthy           = "$.health.healthy"
	PathWaitSeconds       = "$.health.wait_seconds"
	// PathNextStep says a canary's step is stable and another is left:
	// NextStep takes it.
	PathNextStep = "$.health.next_step"
	// PathBake is Bake's report (execution.Bake): whether the bake is
	// over, and how long to wait before its next check.
	PathBake            = "$.bake"
	PathBaked           = "$.bake.done"
	PathBakeWaitSeconds = "$.bake.wait_seconds"
	// PathRetire is CleanUpSuccess's report on retiring the previous
	// groups (execution.Retire): whether it is done, and how long to wait
	// before its next step.
	PathRetire            = "$.retire"
	PathRetired           = "$.retire.done"
	PathRetireWaitSeconds = "$.retire.wait_seconds"
)

// Machine is the deploy state machine as data.
type Machine struct {
	// Comment is the definition's comment.
	Comment string
	// Retry is the retry policy of every task.
	Retry Retry
	// Entry, when set, is the Choice the machine starts in: an input its
	// rules match goes to their state (a plan to Plan), any other to its
	// Default, the first task.
	Entry *Choice
	// Tasks are the Task states, each invoking the deployer function with
	// its own name; without an Entry the first is where the machine starts.
	Tasks []Task
	// Loops are the machine's wait loops, in the order a deploy meets
	// them: the health checks, then the retirement of the previous groups.
	Loops []Loop
	// Choices are the plain Choice states (neither the Entry nor a
	// loop's).
	Choices []Choice
	// Callbacks are the tasks of the callback pattern (a promotion's
	// approval).
	Callbacks []Callback
	// Waves are the Map states (a promotion's stage, deployed at once).
	Waves []Wave
	// Ends are the terminal states; no path ends anywhere else.
	Ends []End
}

// Loop is a wait loop: after a task reports, Choice decides between going
// on (a rule's Next), another wait (its Default: Wait, then the task
// again) and Bad, which records an error for a state without a usable
// report. The waiting is the state machine's: a handler never sleeps.
type Loop struct {
	Choice Choice
	Wait   Wait
	Bad    Pass
}

// Task is a Task state.
type Task struct {
	Name    string
	Comment string
	// ResultPath is where the task's result goes in the state document;
	// empty leaves the definition's default ("$", written nowhere).
	ResultPath string
	// Next is the state that follows a success.
	Next string
	// Catch routes the errors the task names, in order, before Otherwise.
	Catch []Catch
	// Otherwise routes every other error (States.ALL); its Errors are
	// empty.
	Otherwise Catch
}

// Catches returns every Catch of t as the definition lists them: Catch,
// then Otherwise catching States.ALL.
func (t Task) Catches() []Catch {
	all := t.Otherwise
	all.Errors = []string{ErrorAll}
	return append(append([]Catch(nil), t.Catch...), all)
}

// Catch sends errors to a state; the error is stored at PathError.
type Catch struct {
	// Errors are the error names caught (failure's names).
	Errors []string
	// Next is the state the errors go to.
	Next string
	// Note says what the errors mean at this task, for the help page's
	// state table; empty when the route speaks for itself.
	Note string
}

// Retry is a task's retry policy: the errors retried, with exponential
// backoff bounded in attempts and in delay.
type Retry struct {
	Errors          []string
	IntervalSeconds int
	BackoffRate     float64
	// MaxAttempts is how many times a task is retried after its first
	// attempt.
	MaxAttempts     int
	MaxDelaySeconds int
}

// Choice is a Choice state: the first Rule that holds says the next
// state, else Default.
type Choice struct {
	Name    string
	Comment string
	Rules   []Rule
	Default string
}

// Rule is one rule of a Choice: when Variable passes Test, go to Next.
type Rule struct {
	Variable string
	Test     Test
	Next     string
}

// Test is what a Choice rule checks of its variable.
type Test int

// The tests the deploy machine's Choice uses.
const (
	// Absent holds when the variable is not present.
	Absent Test = iota + 1
	// NotBoolean holds when the variable is not a boolean.
	NotBoolean
	// True holds when the variable is the boolean true.
	True
	// NotNumeric holds when the variable is not a number.
	NotNumeric
	// Negative holds when the variable is a number below 0.
	Negative
	// Present holds when the variable is present.
	Present
)

// testWords says each Test in words, for the docs.
var testWords = map[Test]string{
	Absent:     "is not present",
	NotBoolean: "is not a boolean",
	True:       "is true",
	NotNumeric: "is not a number",
	Negative:   "is negative",
	Present:    "is present",
}

// String says the test in words ("is not present").
func (t Test) String() string {
	if s, ok := testWords[t]; ok {
		return s
	}
	return fmt.Sprintf("Test(%d)", int(t))
}

// Wait is a Wait state that waits as many seconds as SecondsPath says.
type Wait struct {
	Name        string
	Comment     string
	SecondsPath string
	Next        string
}

// Pass is a Pass state that stores an error (Error, Cause) at ResultPath.
type Pass struct {
	Name       string
	Comment    string
	Error      string
	Cause      string
	ResultPath string
	Next       string
}

// End is a terminal state: Succeed, or Fail with the error and cause
// stored at PathError.
type End struct {
	Name    string
	Comment string
	Fail    bool
}

// Task returns the task named name.
func (m Machine) Task(name string) (Task, bool) {
	for _, t := range m.Tasks {
		if t.Name == name {
			return t, true
		}
	}
	return Task{}, false
}

// StartAt is the state the machine starts in: the Entry, else the first
// task.
func (m Machine) StartAt() string {
	if m.Entry != nil {
		return m.Entry.Name
	}
	return m.Tasks[0].Name
}

// Next returns the state that follows name when it succeeds: a task's,
// the Wait's or the Pass's Next, the Choice's Default; "" for an end
// state or a name that is not a state.
func (m Machine) Next(name string) string {
	if t, ok := m.Task(name); ok {
		return t.Next
	}
	for _, c := range m.Choices {
		if c.Name == name {
			return c.Default
		}
	}
	for _, c := range m.Callbacks {
		if c.Name == name {
			return c.Next
		}
	}
	for _, w := range m.Waves {
		if w.Name == name {
			return w.Next
		}
	}
	if m.Entry != nil && name == m.Entry.Name {
		return m.Entry.Default
	}
	for _, l := range m.Loops {
		switch name {
		case l.Choice.Name:
			return l.Choice.Default
		case l.Wait.Name:
			return l.Wait.Next
		case l.Bad.Name:
			return l.Bad.Next
		}
	}
	return ""
}

// Loop returns the loop whose Choice is named name.
func (m Machine) Loop(name string) (Loop, bool) {
	for _, l := range m.Loops {
		if l.Choice.Name == name {
			return l, true
		}
	}
	return Loop{}, false
}

// States returns the name of every state at the machine's top level: the
// Entry, the tasks, each loop's states, the plain Choices, the callbacks,
// the waves, the ends. A wave's own states are in its ItemProcessor
// (Wave.States).
func (w Wave) States() []string { return []string{w.Start.Name, w.Deploy, w.Failed} }

// TaskNames returns the name of every deployer task the machine invokes:
// its tasks, its callbacks' and its waves' starts.
func (m Machine) TaskNames() []string {
	var out []string
	for _, t := range m.Tasks {
		out = append(out, t.Name)
	}
	for _, c := range m.Callbacks {
		out = append(out, c.Task)
	}
	for _, w := range m.Waves {
		out = append(out, w.Start.Name)
	}
	return out
}

// States returns the name of every top-level state: the Entry, the tasks,
// each loop's states, the plain Choices, the callbacks, the waves, the
// ends.
func (m Machine) States() []string {
	var out []string
	if m.Entry != nil {
		out = append(out, m.Entry.Name)
	}
	for _, t := range m.Tasks {
		out = append(out, t.Name)
	}
	for _, l := range m.Loops {
		out = append(out, l.Choice.Name, l.Wait.Name, l.Bad.Name)
	}
	for _, c := range m.Choices {
		out = append(out, c.Name)
	}
	for _, c := range m.Callbacks {
		out = append(out, c.Name)
	}
	for _, w := range m.Waves {
		out = append(out, w.Name)
	}
	for _, e := range m.Ends {
		out = append(out, e.Name)
	}
	return out
}
