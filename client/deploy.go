package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/ferryhq/ferry/internal/asset"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/ledger"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

const deployHelp = `Deploy reads the release file and checks it as ferry validate does
(nothing is uploaded when it is invalid), fills in {{USER_DATA_FILE}}, gives
the release an id (UTC time and a random suffix), created_at and created_by
($FERRY_CREATED_BY, else $USER), hashes and uploads its assets (skipping
those already in the bucket), uploads the release and starts the deployer's
execution under a name derived from the release, so a retried start never
starts two deploys. If the same release (same content, whatever its id) is
already being deployed to that project-config, deploy follows that
execution instead of starting another (with --no-wait, it names that
execution and returns).

It then follows the execution to its end: each state as it is entered and,
during CheckHealthy, a line per service with its launched, healthy and
terminating instances against the healthy target. On a terminal the health
lines are redrawn in place; elsewhere (CI logs) there is one line per
change. NO_COLOR turns colour off. --json prints one JSON object per event
and a final {"event":"outcome",...} object.

Ctrl-C stops following, not the deploy. To stop a deploy, run
ferry halt FILE: the deployer notices the halt marker, cleans up and ends
in FailureClean. Never stop the execution itself: nothing would clean up.

The deployer is named by --state-machine and --bucket, else
$FERRY_STATE_MACHINE_ARN and $FERRY_BUCKET, else the conventional
ferry-deployer names in the caller's account and region (AWS credentials
and settings come from the standard chain: AWS_PROFILE, AWS_REGION,
AWS_ENDPOINT_URL, ...). --local uses the local region (ferry local) and
its deployer, whatever $FERRY_STATE_MACHINE_ARN and $FERRY_BUCKET say.

Exit codes:
  0  Success: the release is deployed and the old instances are gone
  1  FailureClean: the release failed and everything it made was removed
  2  FailureDirty: cleaning up failed, or the execution ended without
     reaching an end state; AWS may need a person (see ferry status)
  3  nothing was started: invalid release, no deployer found, credentials
  4  stopped following (Ctrl-C, lost contact): the deploy goes on`

func init() {
	register(&command{
		name:      "deploy",
		args:      "FILE",
		summary:   "Deploy a release and follow it to its end",
		help:      deployHelp,
		usageExit: exitNotStarted,
		flags: func(fs *flag.FlagSet) func(context.Context, Env, []string) int {
			df := addDeployerFlags(fs)
			noWait := fs.Bool("no-wait", false, "return once the execution has started")
			asJSON := fs.Bool("json", false, "print one JSON object per event and the outcome")
			poll := fs.Duration("poll", defaultPollInterval, "how often to read the execution's history while following it (default 1s)")
			return func(ctx context.Context, env Env, args []string) int {
				c := commands["deploy"]
				if len(args) != 1 {
					return c.usageError(env, "deploy takes one release file")
				}
				if *poll <= 0 {
					return c.usageError(env, "--poll must be positive")
				}
				return deploy(ctx, env, deployRequest{
					file: args[0], flags: df, noWait: *noWait, asJSON: *asJSON,
					follow: followOptions{Interval: *poll, Sleep: env.Sleep},
				})
			}
		},
	})
}

// deployRequest is one ferry deploy invocation.
type deployRequest struct {
	file   string
	flags  *deployerFlags
	noWait bool
	asJSON bool
	follow followOptions
}

// deploy runs ferry deploy and returns its exit code.
func deploy(ctx context.Context, env Env, req deployRequest) int {
	out := newDisplay(env, req.asJSON)
	fail := func(format string, args ...any) int {
		fmt.Fprintf(env.Stderr, "ferry deploy: "+format+"\n", args...)
		return exitNotStarted
	}

	r, err := release.ReadFile(req.file)
	if err != nil {
		var bad *failure.BadReleaseError
		if errors.As(err, &bad) {
			for _, line := range bad.Problems {
				fmt.Fprintf(env.Stderr, "%s: %s\n", req.file, line)
			}
			noun := "problems"
			if len(bad.Problems) == 1 {
				noun = "problem"
			}
			return fail("%s is not a valid release (%d %s); nothing was uploaded", req.file, len(bad.Problems), noun)
		}
		return fail("%v", err)
	}
	d, err := connect(ctx, env, req.flags)
	if err != nil {
		return fail("%v", err)
	}
	now, err := d.now(ctx)
	if err != nil {
		return fail("%v", err)
	}
	raw, err := asset.PrepareRelease(r, req.file, now, identity(env), newReleaseID(now))
	if err != nil {
		return fail("%v", err)
	}
	project, config := r.ProjectName, r.ConfigName

	// The same release already on its way: follow it rather than start a
	// second execution that could only fail at Lock.
	running, err := findRunning(ctx, d, project, config)
	if err != nil {
		return fail("%v", err)
	}
	sum, err := contentHash(r)
	if err != nil {
		return fail("%v", err)
	}
	for _, x := range running {
		if other, err := contentHash(x.Release); err == nil && other == sum {
			if req.noWait {
				out.message("ferry deploy: already deploying this release to %s %s (release %s), execution %s", project, config, x.Release.ReleaseID, x.ARN)
				announce(out, req, project, config, x.Release.ReleaseID, x.ARN)
				return exitOK
			}
			out.message("ferry deploy: already deploying this release to %s %s (release %s); following it", project, config, x.Release.ReleaseID)
			announce(out, req, project, config, x.Release.ReleaseID, x.ARN)
			return followToEnd(ctx, env, d, out, x.ARN, req, haltHint(req.flags, req.file))
		}
	}
	for _, x := range running {
		out.message("ferry deploy: note: release %s of %s %s is being deployed (execution %s); this deploy fails at Lock unless it ends first", x.Release.ReleaseID, project, config, x.Name)
	}

	for _, name := range sortedAssetNames(r) {
		a := r.Assets[name]
		got, _, _, err := asset.Upload(ctx, d.s3, d.cfg.Bucket, project, config, release.AssetPath(req.file, a))
		if err != nil {
			return fail("uploading asset %s: %v", name, err)
		}
		if got != a.SHA256 {
			return fail("asset %s (%s) changed while ferry was reading it; run ferry deploy again", name, a.Path)
		}
	}
	if err := ledger.New(d.s3, d.cfg.Bucket).PutRelease(ctx, project, config, r.ReleaseID, raw); err != nil {
		return fail("uploading the release: %v", err)
	}

	name := naming.ExecutionName(project, config, r.ReleaseID)
	arn, err := start(ctx, d, name, raw)
	if err != nil {
		return fail("starting the deploy: %v", err)
	}
	out.message("ferry deploy: %s %s release %s", project, config, r.ReleaseID)
	announce(out, req, project, config, r.ReleaseID, arn)
	if req.noWait {
		out.message("started execution %s\nfollow it with ferry status %s %s; halt it with %s", arn, project, config, haltHint(req.flags, req.file))
		return exitOK
	}
	return followToEnd(ctx, env, d, out, arn, req, haltHint(req.flags, req.file))
}

// announce prints, with --json, the release event: which release and
// execution the command is about.
func announce(out *display, req deployRequest, project, config, releaseID, arn string) {
	if !req.asJSON {
		return
	}
	out.json(struct {
		Event     string `json:"event"`
		Project   string `json:"project"`
		Config    string `json:"config"`
		ReleaseID string `json:"release_id"`
		Execution string `json:"execution_arn"`
	}{"release", project, config, releaseID, arn})
}

// newReleaseID is a release id: the UTC time to the second and 6 random
// hex digits, e.g. 20250102T150405Z-3f9a1c.
func newReleaseID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// start starts the execution name with input raw and returns its ARN. A
// retried start of the same name and input returns the same execution
// (Step Functions' idempotency). A name already used is that execution
// only when its input is raw: an execution of another input under the
// name is an error, never followed as this release's.
func start(ctx context.Context, d *deployer, name string, raw []byte) (string, error) {
	out, err := d.sfn.StartExecution(ctx, &sfn.StartExecutionInput{
		StateMachineArn: aws.String(d.cfg.StateMachineARN),
		Name:            aws.String(name),
		Input:           aws.String(string(raw)),
	})
	var exists *sfntypes.ExecutionAlreadyExists
	if err == nil {
		return aws.ToString(out.ExecutionArn), nil
	}
	if !errors.As(err, &exists) {
		return "", err
	}
	arn := executionARN(d.cfg.StateMachineARN, name)
	desc, err := d.sfn.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		return "", fmt.Errorf("execution %s already exists, and reading it failed: %w", name, err)
	}
	if !sameJSON(aws.ToString(desc.Input), raw) {
		return "", fmt.Errorf("execution %s already exists and deploys another release (started %s); nothing was started",
			name, aws.ToTime(desc.StartDate).UTC().Format(time.RFC3339))
	}
	return arn, nil
}

// sameJSON reports whether text and raw hold the same JSON value. Step
// Functions (and the local region) report an execution's input as it was
// given, so the bytes match; comparing values also accepts an input that
// comes back re-encoded.
func sameJSON(text string, raw []byte) bool {
	var a, b any
	return json.Unmarshal([]byte(text), &a) == nil && json.Unmarshal(raw, &b) == nil && reflect.DeepEqual(a, b)
}

// followToEnd follows an execution and turns its outcome into the exit
// code, with a word on what to do next when it failed.
func followToEnd(ctx context.Context, env Env, d *deployer, out *display, arn string, req deployRequest, halt string) int {
	u, err := followExecution(ctx, d.sfn, arn, out, req.follow)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(env.Stderr, "\nferry: stopped following; the deploy goes on.\nTo stop it: %s\n", halt)
		} else {
			fmt.Fprintf(env.Stderr, "ferry: stopped following: %v\nThe deploy goes on; to stop it: %s\n", err, halt)
		}
		return exitDetached
	}
	if req.asJSON {
		return exitCodeOf(u)
	}
	if u.End == execution.EndFailureDirty || u.End == "" {
		fmt.Fprintf(env.Stderr, "ferry: the deploy did not clean up after itself; AWS may hold resources of this release and the lock is kept.\nSee ferry status, fix what is left, then ferry unlock PROJECT CONFIG --release ID.\n")
	}
	return exitCodeOf(u)
}

// haltHint is the command that halts the deploy of a release file.
func haltHint(f *deployerFlags, file string) string {
	cmd := "ferry halt "
	if f != nil && f.local {
		cmd += "--local "
	}
	return cmd + file
}

func sortedAssetNames(r *release.Release) []string { return slices.Sorted(maps.Keys(r.Assets)) }
