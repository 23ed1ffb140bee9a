package shape

import (
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/tuning"
)

// Names of a promotion's states that are not the deployer's tasks.
const (
	StateGated         = "Gated?"
	StateWaitForGate   = "WaitForGate"
	StateBadGateReport = "BadGateReport"
	StateAwaitApproval = "AwaitApproval"
	StateWave          = "Wave"
	StateDeployTarget  = "DeployTarget"
	StateTargetFailed  = "TargetFailed"
	StatePromoted      = "Promoted?"
)

// Paths of a promotion's state document (execution.Promotion).
const (
	// PathPromotion is a promotion's request (execution.PromotionInput):
	// the entry Choice sends an input with one to Promote.
	PathPromotion = "$.promotion"
	// PathGate is Gate's report (execution.Gate): the stage is open
	// (done), waits for an approval, or waits wait_seconds.
	PathGate            = "$.gate"
	PathGateOpen        = "$.gate.done"
	PathGateApproval    = "$.gate.approval"
	PathGateWaitSeconds = "$.gate.wait_seconds"
	// PathTargets are the wave's items; PathWave its results.
	PathTargets = "$.targets"
	PathWave    = "$.wave"
	// PathEndDone says EndStage ended the last stage.
	PathEndDone = "$.end.done"
	// PathApproval is where an approval's answer goes (Gate reads the
	// approval itself, with its proof).
	PathApproval = "$.approval"
)

// Callback is a Task state of the callback pattern: it invokes the
// deployer's task Task with its task token ($$.Task.Token) and waits
// for the token's answer (SendTaskSuccess or SendTaskFailure) at most
// TimeoutSeconds. Its answer goes to ResultPath; every error (its timeout, a
// failure sent with the token) goes to Otherwise.
type Callback struct {
	// ResultPath is where the answer goes.
	ResultPath     string
	Name           string
	Task           string
	Comment        string
	TimeoutSeconds int
	Next           string
	Otherwise      Catch
}

// Wave is an inline Map state over the items at PathTargets, all at once:
// for each, Start (a deployer task) makes a nested execution's name and
// input, Deploy runs it as an execution of this machine and waits for
// its end (states:startExecution.sync:2), and Failed stores a start or a
// deploy that did not succeed as the item's result. No iteration fails,
// so none aborts another: every target's deploy runs to its own end,
// and each result is at PathWave.
type Wave struct {
	Name       string
	Comment    string
	Start      Task
	Deploy     string
	Failed     string
	ResultPath string
	Next       string
	Otherwise  Catch
}

// promotionEntry is the entry rule of a promotion.
func promotionEntry() Rule { return Rule{PathPromotion, Present, execution.TaskPromote} }

// promotionTasks are a promotion's deployer tasks outside its wave.
func promotionTasks() []Task {
	clean := execution.EndFailureClean
	return []Task{
		{
			Name: execution.TaskPromote, ResultPath: "$", Next: execution.TaskGate,
			Comment:   "Check a promotion's request, who made it and the releases it derives; record it, once; the result (a compact Promotion) replaces the request.",
			Catch:     []Catch{catch(clean, failure.NameBadRelease)},
			Otherwise: Catch{Next: clean, Note: "nothing is deployed"},
		},
		{
			Name: execution.TaskGate, ResultPath: "$", Next: StateGated,
			Comment: "Check the next stage's gates: the pipeline registered in its configs, the stage before still running and serving the release, its soak and alarms, an approval; a halt marker ends the promotion.",
			Catch: []Catch{{Errors: []string{failure.NameHalt}, Next: clean,
				Note: "halted between stages: no deploy runs"}},
			Otherwise: Catch{Next: clean, Note: "no deploy of the stage runs"},
		},
		{
			Name: execution.TaskEndStage, ResultPath: "$", Next: StatePromoted,
			Comment: "Record how each target's deploy ended; the promotion moves on to the next stage, succeeds after the last, or fails with the stage.",
			Catch: []Catch{{Errors: []string{failure.NameCleanUp}, Next: execution.EndFailureDirty,
				Note: "a target's deploy ended dirty"}},
			Otherwise: Catch{Next: clean, Note: "a target's deploy failed clean: the stages after it are not deployed"},
		},
	}
}

// gateLoop is Gate's: an open stage goes to its wave; one that waits
// only for an approval asks for it (AwaitApproval) and checks again when
// answered or timed out; otherwise Gate runs again after the wait it asks.
// A state without a usable report fails clean: nothing of the stage runs.
func gateLoop() Loop {
	rules := reportRules(PathGateOpen, PathGateWaitSeconds, StateWave, StateBadGateReport)
	approval := []Rule{
		{PathGateApproval, Absent, StateBadGateReport},
		{PathGateApproval, NotBoolean, StateBadGateReport},
		{PathGateApproval, True, StateAwaitApproval},
	}
	rules = append(rules[:3:3], append(approval, rules[3:]...)...)
	return Loop{
		Choice: Choice{
			Name:    StateGated,
			Comment: "Deploy the stage's wave once its gates hold, ask for an approval once only that is missing, else wait and check again.",
			Rules:   rules,
			Default: StateWaitForGate,
		},
		Wait: Wait{
			Name:        StateWaitForGate,
			Comment:     "Wait as long as Gate asks: a soak, an alarm, a config without the pipeline registered.",
			SecondsPath: PathGateWaitSeconds,
			Next:        execution.TaskGate,
		},
		Bad: Pass{
			Name:    StateBadGateReport,
			Comment: "The state has no usable report of Gate (a handler bug): fail clean, nothing of the stage runs.",
			Error:   failure.NameInternal,
			Cause: "the state has no usable report at " + PathGate +
				" (done and approval must be booleans, wait_seconds a number >= 0)",
			ResultPath: PathError,
			Next:       execution.EndFailureClean,
		},
	}
}

// promotionChoices are a promotion's plain Choice states.
func promotionChoices() []Choice {
	return []Choice{{
		Name:    StatePromoted,
		Comment: "Succeed once the last stage succeeded, else check the next stage's gates.",
		Rules:   []Rule{{PathEndDone, True, execution.EndSuccess}},
		Default: execution.TaskGate,
	}}
}

// promotionCallbacks are a promotion's callback tasks.
func promotionCallbacks() []Callback {
	return []Callback{{
		Name: StateAwaitApproval, Task: execution.TaskRequestApproval,
		Comment:        "Record the task token an approval answers (ferry pipeline approve) and wait for it; answered, timed out or failed (ferry pipeline halt), check the gates again.",
		TimeoutSeconds: tuning.ApprovalWaitSeconds,
		ResultPath:     PathApproval,
		Next:           execution.TaskGate,
		Otherwise:      Catch{Next: execution.TaskGate, Note: "the gates are checked again: an approval counts only with its proof"},
	}}
}

// promotionWaves are a promotion's waves.
func promotionWaves() []Wave {
	return []Wave{{
		Name:    StateWave,
		Comment: "Deploy every target of the stage at once, each as a nested execution of this machine; every deploy runs to its own end.",
		Start: Task{
			Name: execution.TaskStartTarget, Next: StateDeployTarget,
			Comment:   "Make and store the release one target deploys (the promotion's id, the stage's environment facts), its assets copied to its config.",
			Catch:     []Catch{catch(StateTargetFailed, failure.NameBadRelease)},
			Otherwise: Catch{Next: StateTargetFailed, Note: "the target is not deployed"},
		},
		Deploy:     StateDeployTarget,
		Failed:     StateTargetFailed,
		ResultPath: PathWave,
		Next:       execution.TaskEndStage,
		Otherwise:  Catch{Next: execution.TaskEndStage, Note: "EndStage reads each deploy's own record"},
	}}
}
