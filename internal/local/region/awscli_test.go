package region

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/tuning"
)

// awsCLI runs the AWS CLI's `aws stepfunctions ARGS --endpoint-url URL
// --output json` against the region at url with fake credentials and no
// configuration or instance metadata lookups, requires it to exit 0 and
// returns its answer decoded (JSON numbers as float64, so a test sees the
// types the CLI printed).
func awsCLI(t *testing.T, aws, url string, args ...string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, aws, append(append([]string{"stepfunctions"}, args...),
		"--endpoint-url", url, "--output", "json")...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	home := t.TempDir()
	cmd.Env = append(env,
		"HOME="+home,
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local-secret",
		"AWS_DEFAULT_REGION="+DefaultRegion,
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"AWS_EC2_METADATA_DISABLED=true", "AWS_MAX_ATTEMPTS=1", "AWS_PAGER=",
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	require.NoError(t, err, "aws stepfunctions %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), stdout.String(), stderr.String())
	var out map[string]any
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &out), "the CLI's output:\n%s", stdout.String())
	return out
}

// TestAWSCLI drives the region's Step Functions API with the AWS CLI,
// whose botocore parses every answer against the service model, and
// checks the fields a user reads: the operations and their answers are
// those of the API reference
// (https://docs.aws.amazon.com/step-functions/latest/apireference/API_ListStateMachines.html,
// API_DescribeStateMachine, API_StartExecution, API_ListExecutions,
// API_DescribeExecution, API_GetExecutionHistory, API_StopExecution);
// timestamps are epoch seconds on the wire (the awsJson1_0 protocol), and
// the CLI prints them as it received them, numbers.
func TestAWSCLI(t *testing.T) {
	aws, err := exec.LookPath("aws")
	if err != nil {
		t.Skip("the AWS CLI (aws) is not on PATH: install it to check the region's Step Functions API with it")
	}
	ctx := context.Background()
	r, clk := newTestRegion(t, Options{})
	url := serve(t, r)
	sm := r.StateMachineARN()
	isNumber := func(t *testing.T, v any, what string) {
		t.Helper()
		assert.IsType(t, float64(0), v, "%s is a number: %v", what, v)
	}

	// ListStateMachines: the one machine.
	list := awsCLI(t, aws, url, "list-state-machines")
	require.Len(t, list["stateMachines"], 1)
	item := list["stateMachines"].([]any)[0].(map[string]any)
	assert.Equal(t, sm, item["stateMachineArn"])
	assert.Equal(t, naming.StateMachineName, item["name"])
	assert.Equal(t, "STANDARD", item["type"])
	isNumber(t, item["creationDate"], "creationDate")

	// DescribeStateMachine: the definition and the deployed logging.
	desc := awsCLI(t, aws, url, "describe-state-machine", "--state-machine-arn", sm)
	assert.Equal(t, string(r.Definition()), desc["definition"])
	assert.Equal(t, "ACTIVE", desc["status"])
	isNumber(t, desc["creationDate"], "creationDate")
	logging := desc["loggingConfiguration"].(map[string]any)
	assert.Equal(t, tuning.StateMachineLogLevel, logging["level"])
	assert.Equal(t, tuning.StateMachineLogExecutionData, logging["includeExecutionData"])
	assert.Equal(t, []any{map[string]any{"cloudWatchLogsLogGroup": map[string]any{
		"logGroupArn": naming.LogGroupARN("111111111111", DefaultRegion, naming.StateMachineLogGroupName)}}},
		logging["destinations"])
	assert.Equal(t, map[string]any{"enabled": false}, desc["tracingConfiguration"])

	// StartExecution with an indented input: the deploy runs to Success
	// and its input comes back byte for byte.
	compact := proved(t, r, releaseJSON(t, clk, "r1"))
	require.NoError(t, ledger.New(r.S3(), r.Bucket()).PutRelease(ctx, testProject, testConfig, "r1", compact))
	var v any
	require.NoError(t, json.Unmarshal(compact, &v))
	indented, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	input := string(indented) + "\n"
	inputFile := filepath.Join(t.TempDir(), "input.json")
	require.NoError(t, os.WriteFile(inputFile, []byte(input), 0o644))
	started := awsCLI(t, aws, url, "start-execution", "--state-machine-arn", sm, "--name", "r1", "--input", "file://"+inputFile)
	arn, _ := started["executionArn"].(string)
	assert.Equal(t, asl.ExecutionARN(sm, "r1"), arn)
	isNumber(t, started["startDate"], "startDate")
	d, err := r.Wait(ctx, arn)
	require.NoError(t, err)
	require.Equal(t, asl.StatusSucceeded, d.Status, "%s: %s", d.Error, d.Cause)

	execs := awsCLI(t, aws, url, "list-executions", "--state-machine-arn", sm)
	require.Len(t, execs["executions"], 1)
	listed := execs["executions"].([]any)[0].(map[string]any)
	assert.Equal(t, arn, listed["executionArn"])
	assert.Equal(t, "SUCCEEDED", listed["status"])
	isNumber(t, listed["startDate"], "startDate")
	isNumber(t, listed["stopDate"], "stopDate")
	assert.Equal(t, float64(0), listed["redriveCount"])
	// --redrive-filter lists the executions that were (REDRIVEN) or were
	// not (NOT_REDRIVEN) redriven (API_ListExecutions, redriveFilter): this
	// one never was.
	assert.Empty(t, awsCLI(t, aws, url, "list-executions", "--state-machine-arn", sm, "--redrive-filter", "REDRIVEN")["executions"])
	assert.Len(t, awsCLI(t, aws, url, "list-executions", "--state-machine-arn", sm, "--redrive-filter", "NOT_REDRIVEN")["executions"], 1)

	described := awsCLI(t, aws, url, "describe-execution", "--execution-arn", arn)
	assert.Equal(t, "SUCCEEDED", described["status"])
	assert.Equal(t, input, described["input"], "the input as given")
	assert.Equal(t, d.Output, described["output"])
	isNumber(t, described["startDate"], "startDate")
	isNumber(t, described["stopDate"], "stopDate")
	assert.Equal(t, float64(0), described["redriveCount"])
	assert.Equal(t, "NOT_REDRIVABLE", described["redriveStatus"])
	assert.Equal(t, "Execution is SUCCEEDED and cannot be redriven", described["redriveStatusReason"])
	meta := awsCLI(t, aws, url, "describe-execution", "--execution-arn", arn, "--included-data", "METADATA_ONLY")
	assert.NotContains(t, meta, "input")
	assert.NotContains(t, meta, "output")
	assert.Equal(t, "SUCCEEDED", meta["status"])

	// GetExecutionHistory: the CLI pages through it all.
	history := awsCLI(t, aws, url, "get-execution-history", "--execution-arn", arn)
	events := history["events"].([]any)
	x, err := r.Execution(arn)
	require.NoError(t, err)
	require.Len(t, events, len(x.History()))
	first := events[0].(map[string]any)
	assert.Equal(t, "ExecutionStarted", first["type"])
	isNumber(t, first["timestamp"], "timestamp")
	isNumber(t, first["id"], "id")
	assert.Equal(t, input, first["executionStartedEventDetails"].(map[string]any)["input"])
	lastEvent := events[len(events)-1].(map[string]any)
	assert.Equal(t, "ExecutionSucceeded", lastEvent["type"])
	bare := awsCLI(t, aws, url, "get-execution-history", "--execution-arn", arn, "--no-include-execution-data", "--reverse-order")
	bareEvents := bare["events"].([]any)
	require.Len(t, bareEvents, len(events))
	assert.Equal(t, "ExecutionSucceeded", bareEvents[0].(map[string]any)["type"])
	assert.NotContains(t, bareEvents[0].(map[string]any)["executionSucceededEventDetails"], "output")

	// StopExecution of a running execution: ABORTED, and redrivable.
	hold := r.Hold()
	defer hold()
	raw2 := proved(t, r, releaseJSON(t, clk, "r2"))
	require.NoError(t, ledger.New(r.S3(), r.Bucket()).PutRelease(ctx, testProject, testConfig, "r2", raw2))
	running := awsCLI(t, aws, url, "start-execution", "--state-machine-arn", sm, "--name", "r2", "--input", string(raw2))
	runningDesc := awsCLI(t, aws, url, "describe-execution", "--execution-arn", running["executionArn"].(string))
	assert.Equal(t, "RUNNING", runningDesc["status"])
	assert.NotContains(t, runningDesc, "stopDate")
	assert.Equal(t, "NOT_REDRIVABLE", runningDesc["redriveStatus"])
	assert.Equal(t, "Execution is RUNNING and cannot be redriven", runningDesc["redriveStatusReason"])
	arn2 := running["executionArn"].(string)
	stopped := awsCLI(t, aws, url, "stop-execution", "--execution-arn", arn2, "--error", "Operator", "--cause", "stopped with the AWS CLI")
	isNumber(t, stopped["stopDate"], "stopDate")
	aborted := awsCLI(t, aws, url, "describe-execution", "--execution-arn", arn2)
	assert.Equal(t, "ABORTED", aborted["status"])
	assert.Equal(t, "Operator", aborted["error"])
	assert.Equal(t, "stopped with the AWS CLI", aborted["cause"])
	assert.Equal(t, "REDRIVABLE", aborted["redriveStatus"])
	assert.NotContains(t, aborted, "redriveStatusReason")
	assert.NotContains(t, aborted, "output")
}
