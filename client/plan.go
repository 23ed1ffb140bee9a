package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/ferryhq/ferry/client/submit"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
)

const planHelp = `Plan says what ferry deploy FILE would do if it started now, without
doing it: the release is checked as deploy checks it, then the deployer's
own code answers in a plan execution of its state machine (Plan, which
takes no lock and writes nothing): per service, the group it would
create (launch count, healthy target, desired, min and max, the AMI id,
instance type, subnets and load balancers resolved in the target, the
user data digest); the groups the swap would retire (in the release's
target and in every other the config has deployed to: a move's old
one), the services it would remove and the load balancers a service
would leave (its "detach"); what changed from the release deployed now
(AMI, instance type, user data, capacity, load balancers, alarms); and
every reason the deploy would be refused (a resource missing or not
ferry's, a service left out without "remove", a load balancer or target
group a service leaves without its "detach", no room for the groups, a
target other than the one the config is deployed to without "move_from"
naming that one). A refused plan retires, removes and detaches nothing:
the refusals say why. While another release deploys (holds the lock),
that is the one reason given, and nothing else is planned: plan again
when it ends. The group names carry this plan's release id; a deploy's
carry its own. --json prints the plan as one JSON object.

It exits 0 when the deploy would proceed, 1 when it would be refused,
3 on an invalid release (nothing asked of the deployer).`

// queryPoll is how often a query (plan, drift) reads its execution until
// it ends: a query takes a few task-seconds.
const queryPoll = time.Second

// planCommand is ferry plan.
type planCommand struct {
	env      Env
	deployer deployerFlags
	asJSON   bool
}

func (c *planCommand) spec() commandSpec {
	return commandSpec{
		name:    "plan",
		args:    "FILE",
		summary: "Say what a deploy of a release would do now, changing nothing",
		help:    planHelp,
		exits:   []int{exitFailure, exitNotStarted},
	}
}

func (c *planCommand) defineFlags(fs *flag.FlagSet) {
	c.deployer.define(fs)
	fs.BoolVar(&c.asJSON, "json", false, "print the plan as JSON")
}

// Run plans the release file args[0].
func (c *planCommand) Run(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return usageErrorf(c.spec(), "plan takes one release file")
	}
	return commandFailure("plan", exitFailure, c.plan(ctx, args[0]))
}

func (c *planCommand) plan(ctx context.Context, file string) error {
	r, err := readRelease(c.env.Stderr, file)
	if err != nil {
		return &ExitError{Code: exitNotStarted, Err: err}
	}
	d, err := connect(ctx, c.env, &c.deployer)
	if err != nil {
		return &ExitError{Code: exitNotStarted, Err: err}
	}
	now, err := d.now(ctx)
	if err != nil {
		return err
	}
	p, err := submit.Prepare(ctx, d.prover, r, file, now, displayName(c.env), submit.NewReleaseID(now, c.env.Random))
	if err != nil {
		return &ExitError{Code: exitNotStarted, Err: err}
	}
	plan, err := askPlan(ctx, c.env, d, p)
	if err != nil {
		return err
	}
	if c.asJSON {
		if err := writeEvent(c.env.Stdout, evPlan, stablePlan(*plan), true); err != nil {
			return err
		}
	} else {
		writePlan(c.env.Stdout, plan)
	}
	if !plan.Proceed {
		return exitSilently(exitFailure)
	}
	return nil
}

// stablePlan is p with every list a JSON array, empty rather than null:
// the keys of ferry plan --json are stable.
func stablePlan(p execution.Plan) execution.Plan {
	p.Refusals, p.Groups, p.Retire, p.Remove, p.Changes = nonNil(p.Refusals), nonNil(p.Groups), nonNil(p.Retire), nonNil(p.Remove), nonNil(p.Changes)
	return p
}

// askPlan starts the plan execution of p and reads it until it ends: its
// output is the plan (askQuery).
func askPlan(ctx context.Context, env Env, d *deployer, p *submit.Prepared) (*execution.Plan, error) {
	var plan execution.Plan
	if err := askQuery(ctx, env, d, "plan-"+p.Release.ReleaseID, execution.PlanInput{Plan: p.Raw}, &plan); err != nil {
		return nil, err
	}
	return &plan, nil
}

// askQuery starts a query's execution (a plan, a drift query) named name
// with input and reads it until it ends, decoding its output, the
// answer, into answer. A query the deployer refused as a bad release
// (or bad names) is exitNotStarted with the problems; any other failure
// is an error.
func askQuery(ctx context.Context, env Env, d *deployer, name string, input, answer any) error {
	raw, err := json.Marshal(input)
	if err != nil {
		return err
	}
	kind, _, _ := strings.Cut(name, "-")
	arn, err := d.submitter().StartNamed(ctx, name, raw)
	if err != nil {
		return fmt.Errorf("starting the %s: %w", kind, err)
	}
	for {
		out, err := d.sfn.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err != nil {
			return fmt.Errorf("reading the %s %s: %w", kind, arn, err)
		}
		switch out.Status {
		case sfntypes.ExecutionStatusRunning, sfntypes.ExecutionStatusPendingRedrive:
			if err := env.Sleep(ctx, queryPoll); err != nil {
				return err
			}
			continue
		case sfntypes.ExecutionStatusSucceeded:
			if err := json.Unmarshal([]byte(aws.ToString(out.Output)), answer); err != nil {
				return fmt.Errorf("the %s %s answered nothing readable: %w", kind, arn, err)
			}
			return nil
		}
		name, cause := aws.ToString(out.Error), aws.ToString(out.Cause)
		if name == failure.NameBadRelease {
			return &ExitError{Code: exitNotStarted, Err: fmt.Errorf("the deployer refuses the %s: %s", kind, describeError(name, cause))}
		}
		return fmt.Errorf("the %s %s ended %s: %s", kind, arn, out.Status, describeError(name, cause))
	}
}

// writePlan prints a plan for people.
func writePlan(w io.Writer, p *execution.Plan) {
	fmt.Fprintf(w, "ferry plan: %s %s in account %s region %s\n", p.ProjectName, p.ConfigName, p.Target.AccountID, p.Target.Region)
	fmt.Fprintf(w, "  deployed now: %s\n", firstNonEmpty(p.Deployed, "nothing"))
	if len(p.Groups) > 0 {
		fmt.Fprintln(w, "  create")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, g := range p.Groups {
			capacity := fmt.Sprintf("launch %d, healthy %d, desired %d (min %d, max %d)", g.Launch, g.HealthyTarget, g.Desired, g.Min, g.Max)
			if g.Steps > 1 {
				capacity += fmt.Sprintf(", %d canary steps", g.Steps)
			}
			row(tw, "    "+g.Service, firstNonEmpty(g.ImageID, "(image not resolved)"), g.InstanceType, capacity)
			row(tw, "", "group "+g.Group)
			row(tw, "", "subnets "+strings.Join(g.Subnets, ", "))
			if lbs := append(append([]string(nil), g.LoadBalancers...), g.TargetGroups...); len(lbs) > 0 {
				row(tw, "", "load balancers "+strings.Join(lbs, ", "))
			}
		}
		tw.Flush()
	}
	here := slices.Clone(p.Retire)
	for _, tg := range p.Elsewhere {
		here = slices.DeleteFunc(here, func(g string) bool { return slices.Contains(tg.Groups, g) })
	}
	groupRows(w, "retire", here)
	for _, tg := range p.Elsewhere {
		groupRows(w, "retire in "+tg.Target.Describe(), tg.Groups)
	}
	if len(p.Remove) > 0 {
		fmt.Fprintf(w, "  remove services: %s\n", strings.Join(p.Remove, ", "))
	}
	for _, d := range p.Detach {
		fmt.Fprintf(w, "  detach: %s\n", d)
	}
	if len(p.Changes) > 0 {
		fmt.Fprintln(w, "  changes from the release deployed now")
		for _, ch := range p.Changes {
			what := ch.Field
			if ch.Service != "" {
				what = ch.Service + " " + ch.Field
			}
			fmt.Fprintf(w, "    %s: %s -> %s\n", what, firstNonEmpty(oneLine(ch.From), "(none)"), firstNonEmpty(oneLine(ch.To), "(none)"))
		}
	}
	if p.Proceed {
		fmt.Fprintln(w, "the deploy would proceed")
		return
	}
	fmt.Fprintf(w, "the deploy would be refused (%d %s):\n", len(p.Refusals), plural(len(p.Refusals), "reason", "reasons"))
	for _, r := range p.Refusals {
		fmt.Fprintf(w, "  %s\n", oneLine(r))
	}
}
