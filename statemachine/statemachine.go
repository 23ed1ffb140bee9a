package statemachine

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	sfn "github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctionstasks"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/ferryhq/ferry/statemachine/shape"
)

// Props configures the deploy state machine.
type Props struct {
	// Function is the deployer Lambda every task invokes. Required.
	Function awslambda.IFunction
	// StateMachineName is the machine's physical name; empty lets
	// CloudFormation name it.
	StateMachineName string
	// Logs configures execution logging; nil disables it.
	Logs *sfn.LogOptions
	// Tracing enables X-Ray tracing.
	Tracing bool
	// RemovalPolicy of the state machine; zero keeps the CDK default.
	RemovalPolicy awscdk.RemovalPolicy
}

// Deployer is the deploy state machine construct.
type Deployer struct {
	// Construct is the scope holding every state and the state machine.
	Construct constructs.Construct
	// StateMachine is the Step Functions state machine. Its role may invoke
	// Props.Function and nothing else the machine adds.
	StateMachine sfn.StateMachine
}

// New defines the deploy state machine in scope. It panics (as every CDK
// construct does on a misuse) when props or props.Function is nil.
func New(scope constructs.Construct, id string, props *Props) *Deployer {
	if props == nil || props.Function == nil {
		panic("statemachine.New: Props.Function is required")
	}
	c := constructs.NewConstruct(scope, jsii.String(id))
	start := Chain(c, props.Function)

	smProps := &sfn.StateMachineProps{
		DefinitionBody:   sfn.DefinitionBody_FromChainable(start),
		StateMachineType: sfn.StateMachineType_STANDARD,
		Comment:          jsii.String(shape.Deploy().Comment),
		Logs:             props.Logs,
		TracingEnabled:   jsii.Bool(props.Tracing),
	}
	if props.StateMachineName != "" {
		smProps.StateMachineName = jsii.String(props.StateMachineName)
	}
	if props.RemovalPolicy != "" {
		smProps.RemovalPolicy = props.RemovalPolicy
	}
	sm := sfn.NewStateMachine(c, jsii.String("StateMachine"), smProps)
	grantNestedExecutions(c, sm)
	return &Deployer{Construct: c, StateMachine: sm}
}

// grantNestedExecutions lets the machine's role run what a promotion's
// wave runs: executions of the machine itself, waited for with
// startExecution.sync:2, which Step Functions follows through the managed
// EventBridge rule StepFunctionsGetEventsForStepFunctionsExecutionRule and
// stops when the task is cancelled (Step Functions Developer Guide, "IAM
// policies for AWS Step Functions": StartExecution on the state machine;
// DescribeExecution and StopExecution on its executions; PutTargets,
// PutRule and DescribeRule on the rule). A Policy of its own, attached to
// the role, and not the role's default policy: the state machine depends
// on that, and naming its own ARN there would be a cycle.
func grantNestedExecutions(scope constructs.Construct, sm sfn.StateMachine) {
	str := jsii.String
	arn := sm.StateMachineArn()
	name := awscdk.Fn_Select(jsii.Number(6), awscdk.Fn_Split(str(":"), arn, jsii.Number(7)))
	executions := awscdk.Fn_Join(str(""), &[]*string{
		str("arn:"), awscdk.Aws_PARTITION(), str(":states:"), awscdk.Aws_REGION(), str(":"), awscdk.Aws_ACCOUNT_ID(),
		str(":execution:"), name, str(":*"),
	})
	rule := awscdk.Fn_Join(str(""), &[]*string{
		str("arn:"), awscdk.Aws_PARTITION(), str(":events:"), awscdk.Aws_REGION(), str(":"), awscdk.Aws_ACCOUNT_ID(),
		str(":rule/StepFunctionsGetEventsForStepFunctionsExecutionRule"),
	})
	awsiam.NewPolicy(scope, str("NestedExecutions"), &awsiam.PolicyProps{
		Roles: &[]awsiam.IRole{sm.Role()},
		Statements: &[]awsiam.PolicyStatement{
			awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{Sid: str("StartItself"),
				Actions: jsii.Strings("states:StartExecution"), Resources: &[]*string{arn}}),
			awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{Sid: str("FollowItsExecutions"),
				Actions: jsii.Strings("states:DescribeExecution", "states:StopExecution"), Resources: &[]*string{executions}}),
			awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{Sid: str("ManagedExecutionRule"),
				Actions: jsii.Strings("events:PutTargets", "events:PutRule", "events:DescribeRule"), Resources: &[]*string{rule}}),
		},
	})
}

// Chain defines every state of the deploy machine in scope, as
// shape.Deploy declares it, each task invoking fn, and returns the start
// state (the entry Choice, Query?). New uses it (and so RenderDefinition does).
func Chain(scope constructs.Construct, fn awslambda.IFunction) sfn.IChainable {
	m := shape.Deploy()
	c := &chain{states: map[string]sfn.IChainable{}}
	for _, e := range m.Ends {
		c.add(e.Name, newEnd(scope, e))
	}
	for _, t := range m.Tasks {
		task := newTask(scope, fn, t, m.Retry)
		c.add(t.Name, task)
		c.later(func() {
			task.Next(c.at(t.Next))
			for _, k := range t.Catches() {
				task.AddCatch(c.at(k.Next), &sfn.CatchProps{Errors: jsii.Strings(k.Errors...), ResultPath: jsii.String(shape.PathError)})
			}
		})
	}
	for _, l := range m.Loops {
		ls := newLoop(scope, l)
		c.add(l.Choice.Name, ls.choice)
		c.add(l.Wait.Name, ls.wait)
		c.add(l.Bad.Name, ls.bad)
		c.later(func() {
			ls.wait.Next(c.at(l.Wait.Next))
			ls.bad.Next(c.at(l.Bad.Next))
			c.choose(ls.choice, l.Choice)
		})
	}
	for _, ch := range m.Choices {
		choice := sfn.NewChoice(scope, jsii.String(ch.Name), &sfn.ChoiceProps{Comment: jsii.String(ch.Comment)})
		c.add(ch.Name, choice)
		c.later(func() { c.choose(choice, ch) })
	}
	for _, cb := range m.Callbacks {
		task := newCallback(scope, fn, cb, m.Retry)
		c.add(cb.Name, task)
		c.later(func() { task.Next(c.at(cb.Next)); task.AddCatch(c.at(cb.Otherwise.Next), catchAll()) })
	}
	for _, w := range m.Waves {
		wave := newWave(scope, fn, w, m.Retry)
		c.add(w.Name, wave)
		c.later(func() { wave.Next(c.at(w.Next)); wave.AddCatch(c.at(w.Otherwise.Next), catchAll()) })
	}
	if e := m.Entry; e != nil {
		entry := sfn.NewChoice(scope, jsii.String(e.Name), &sfn.ChoiceProps{Comment: jsii.String(e.Comment)})
		c.add(e.Name, entry)
		c.later(func() { c.choose(entry, *e) })
	}
	for _, wire := range c.wires {
		wire()
	}
	return c.at(m.StartAt())
}

// chain is the states Chain defines, by name, and the transitions it
// wires once every state is defined.
type chain struct {
	states map[string]sfn.IChainable
	wires  []func()
}

func (c *chain) add(name string, st sfn.IChainable) { c.states[name] = st }

// later wires transitions once every state is defined.
func (c *chain) later(wire func()) { c.wires = append(c.wires, wire) }

// at is the state named name. It panics when the shape names a state it
// does not declare, as a CDK construct does on a misuse.
func (c *chain) at(name string) sfn.IChainable {
	st, ok := c.states[name]
	if !ok {
		panic("statemachine: the shape names no state " + name)
	}
	return st
}

// catchAll catches every error (States.ALL) and stores it at
// shape.PathError, as every Catch of the machine does.
func catchAll() *sfn.CatchProps {
	return &sfn.CatchProps{Errors: jsii.Strings(shape.ErrorAll), ResultPath: jsii.String(shape.PathError)}
}

// choose wires choice's rules and default as ch declares them.
func (c *chain) choose(choice sfn.Choice, ch shape.Choice) {
	for _, r := range ch.Rules {
		choice.When(condition(r), c.at(r.Next), nil)
	}
	choice.Otherwise(c.at(ch.Default))
}

// loopStates are the states of one wait loop; Chain wires their
// transitions.
type loopStates struct {
	choice sfn.Choice
	wait   sfn.Wait
	bad    sfn.Pass
}

// newLoop defines the states of loop l: its Choice, its Wait and the Pass
// that records a state without a usable report.
func newLoop(scope constructs.Construct, l shape.Loop) loopStates {
	return loopStates{
		choice: sfn.NewChoice(scope, jsii.String(l.Choice.Name), &sfn.ChoiceProps{Comment: jsii.String(l.Choice.Comment)}),
		wait: sfn.NewWait(scope, jsii.String(l.Wait.Name), &sfn.WaitProps{
			Comment: jsii.String(l.Wait.Comment),
			Time:    sfn.WaitTime_SecondsPath(jsii.String(l.Wait.SecondsPath)),
		}),
		bad: sfn.NewPass(scope, jsii.String(l.Bad.Name), &sfn.PassProps{
			Comment:    jsii.String(l.Bad.Comment),
			Result:     sfn.Result_FromObject(&map[string]interface{}{"Error": l.Bad.Error, "Cause": l.Bad.Cause}),
			ResultPath: jsii.String(l.Bad.ResultPath),
		}),
	}
}

// newEnd defines an end state: Succeed, or Fail reading the error and its
// cause where the Catches stored them.
func newEnd(scope constructs.Construct, e shape.End) sfn.IChainable {
	if !e.Fail {
		return sfn.NewSucceed(scope, jsii.String(e.Name), &sfn.SucceedProps{Comment: jsii.String(e.Comment)})
	}
	return sfn.NewFail(scope, jsii.String(e.Name), &sfn.FailProps{
		Comment:   jsii.String(e.Comment),
		ErrorPath: jsii.String(shape.PathError + ".Error"),
		CausePath: jsii.String(shape.PathError + ".Cause"),
	})
}

// newTask defines a task invoking fn with the execution.Request of task t,
// retrying as r says. Its Next and Catches are wired by Chain.
func newTask(scope constructs.Construct, fn awslambda.IFunction, t shape.Task, r shape.Retry) awsstepfunctionstasks.LambdaInvoke {
	str := jsii.String
	props := &awsstepfunctionstasks.LambdaInvokeProps{
		LambdaFunction:           fn,
		PayloadResponseOnly:      jsii.Bool(true),
		RetryOnServiceExceptions: jsii.Bool(false),
		Comment:                  str(t.Comment),
		Payload: sfn.TaskInput_FromObject(&map[string]interface{}{
			"task":  t.Name,
			"input": sfn.JsonPath_EntirePayload(),
			"execution": map[string]interface{}{
				"id":          sfn.JsonPath_StringAt(str("$$.Execution.Id")),
				"name":        sfn.JsonPath_StringAt(str("$$.Execution.Name")),
				"start_time":  sfn.JsonPath_StringAt(str("$$.Execution.StartTime")),
				"retry_count": sfn.JsonPath_NumberAt(str("$$.State.RetryCount")),
			},
		}),
	}
	if t.ResultPath != "" {
		props.ResultPath = str(t.ResultPath)
	}
	task := awsstepfunctionstasks.NewLambdaInvoke(scope, str(t.Name), props)
	task.AddRetry(&sfn.RetryProps{
		Errors:      jsii.Strings(r.Errors...),
		Interval:    awscdk.Duration_Seconds(jsii.Number(r.IntervalSeconds)),
		BackoffRate: jsii.Number(r.BackoffRate),
		MaxAttempts: jsii.Number(r.MaxAttempts),
		MaxDelay:    awscdk.Duration_Seconds(jsii.Number(r.MaxDelaySeconds)),
	})
	return task
}

// conditions are the CDK's forms of the Choice tests shape declares.
var conditions = map[shape.Test]func(variable *string) sfn.Condition{
	shape.Absent:     sfn.Condition_IsNotPresent,
	shape.NotBoolean: sfn.Condition_IsNotBoolean,
	shape.True:       func(v *string) sfn.Condition { return sfn.Condition_BooleanEquals(v, jsii.Bool(true)) },
	shape.NotNumeric: sfn.Condition_IsNotNumeric,
	shape.Negative:   func(v *string) sfn.Condition { return sfn.Condition_NumberLessThan(v, jsii.Number(0)) },
	shape.Present:    sfn.Condition_IsPresent,
}

// condition is the CDK's form of a Choice rule's test. It panics on a test
// it does not know, as a CDK construct does on a misuse.
func condition(r shape.Rule) sfn.Condition {
	c, ok := conditions[r.Test]
	if !ok {
		panic("statemachine: no condition for the Choice test " + r.Test.String())
	}
	return c(jsii.String(r.Variable))
}
