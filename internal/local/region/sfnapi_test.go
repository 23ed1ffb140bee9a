package region

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/tuning"
)

// callSFN posts body to the Step Functions API operation op of the region
// at url, as the awsJson1_0 protocol does, and returns the status and the
// decoded answer (JSON numbers as float64, so a test sees the wire types).
func callSFN(t *testing.T, url, op, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", jsonContentType)
	req.Header.Set("X-Amz-Target", sfnTargetPrefix+op)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestDescribeStateMachine: the local state machine is described as the
// DeployerStack deploys it. DescribeStateMachine's answer (API reference,
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeStateMachine.html)
// has loggingConfiguration {level, includeExecutionData, destinations:
// [{cloudWatchLogsLogGroup: {logGroupArn}}]} (API_LoggingConfiguration,
// API_CloudWatchLogsLogGroup: "The ARN must end with :*") and
// tracingConfiguration {enabled} (API_TracingConfiguration: "Default is
// false"); with includedData METADATA_ONLY "the returned definition will
// be {}"; an includedData outside [ALL_DATA, METADATA_ONLY] is a
// ValidationException.
func TestDescribeStateMachine(t *testing.T) {
	r, _ := newTestRegion(t, Options{})
	url := serve(t, r)
	wantLogging := map[string]any{
		"level":                tuning.StateMachineLogLevel,
		"includeExecutionData": tuning.StateMachineLogExecutionData,
		"destinations": []any{map[string]any{"cloudWatchLogsLogGroup": map[string]any{
			"logGroupArn": "arn:aws:logs:us-east-1:111111111111:log-group:/aws/vendedlogs/states/ferry-deployer:*"}}},
	}
	tests := []struct {
		name    string
		body    map[string]any
		status  int
		errType string
		wantDef string
	}{
		{"default", map[string]any{"stateMachineArn": r.StateMachineARN()}, http.StatusOK, "", string(r.Definition())},
		{"ALL_DATA", map[string]any{"stateMachineArn": r.StateMachineARN(), "includedData": "ALL_DATA"}, http.StatusOK, "", string(r.Definition())},
		{"METADATA_ONLY", map[string]any{"stateMachineArn": r.StateMachineARN(), "includedData": "METADATA_ONLY"}, http.StatusOK, "", "{}"},
		{"bad includedData", map[string]any{"stateMachineArn": r.StateMachineARN(), "includedData": "SOME"}, http.StatusBadRequest, CodeValidation, ""},
		{"other machine", map[string]any{"stateMachineArn": "arn:aws:states:us-east-1:111111111111:stateMachine:other"}, http.StatusBadRequest, CodeStateMachineDoesNotExist, ""},
		{"bad arn", map[string]any{"stateMachineArn": "nope"}, http.StatusBadRequest, CodeInvalidArn, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := callSFN(t, url, "DescribeStateMachine", mustJSON(t, tt.body))
			require.Equal(t, tt.status, status, "%v", out)
			if tt.errType != "" {
				assert.Equal(t, tt.errType, out["__type"])
				return
			}
			assert.Equal(t, tt.wantDef, out["definition"])
			assert.Equal(t, r.StateMachineARN(), out["stateMachineArn"])
			assert.Equal(t, naming.StateMachineName, out["name"])
			assert.Equal(t, "ACTIVE", out["status"])
			assert.Equal(t, "STANDARD", out["type"])
			assert.IsType(t, float64(0), out["creationDate"], "a timestamp is epoch seconds")
			assert.Equal(t, wantLogging, out["loggingConfiguration"])
			assert.Equal(t, map[string]any{"enabled": tuning.StateMachineTracing}, out["tracingConfiguration"])
		})
	}

	// The SDK reads it as the same.
	sm, err := sfnClient(url).DescribeStateMachine(context.Background(), &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(r.StateMachineARN())})
	require.NoError(t, err)
	require.NotNil(t, sm.LoggingConfiguration)
	assert.Equal(t, sfntypes.LogLevelAll, sm.LoggingConfiguration.Level)
	assert.True(t, sm.LoggingConfiguration.IncludeExecutionData)
	require.Len(t, sm.LoggingConfiguration.Destinations, 1)
	assert.Equal(t, naming.LogGroupARN("111111111111", DefaultRegion, naming.StateMachineLogGroupName),
		aws.ToString(sm.LoggingConfiguration.Destinations[0].CloudWatchLogsLogGroup.LogGroupArn))
	require.NotNil(t, sm.TracingConfiguration)
	assert.False(t, sm.TracingConfiguration.Enabled)
}

// TestListStateMachines: the region lists its one state machine as
// ListStateMachines does (API reference,
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_ListStateMachines.html):
// stateMachines [{stateMachineArn, name, type, creationDate}] (all four
// required, API_StateMachineListItem); maxResults "The default is 100 and
// the maximum allowed page size is 1000. A value of 0 uses the default",
// outside that a ValidationException; nextToken 1 to 1024 characters,
// and a token the service did not give out is "an HTTP 400 InvalidToken
// error".
func TestListStateMachines(t *testing.T) {
	r, _ := newTestRegion(t, Options{})
	url := serve(t, r)
	item := map[string]any{
		"stateMachineArn": r.StateMachineARN(), "name": naming.StateMachineName, "type": "STANDARD",
		"creationDate": float64(epoch0.Unix()),
	}
	tests := []struct {
		name    string
		body    string
		errType string
	}{
		{"no parameters", `{}`, ""},
		{"empty body", ``, ""},
		{"maxResults 0 is the default", `{"maxResults": 0}`, ""},
		{"maxResults 1", `{"maxResults": 1}`, ""},
		{"maxResults 1000", `{"maxResults": 1000}`, ""},
		{"maxResults 1001", `{"maxResults": 1001}`, CodeValidation},
		{"maxResults -1", `{"maxResults": -1}`, CodeValidation},
		{"maxResults not a number", `{"maxResults": "ten"}`, CodeSerialization},
		{"garbage token", `{"nextToken": "garbage!"}`, CodeInvalidToken},
		{"token of another list", `{"nextToken": "` + encodeToken("executions", "", "1") + `"}`, CodeInvalidToken},
		{"token past the end", `{"nextToken": "` + encodeToken("statemachines", "7") + `"}`, CodeInvalidToken},
		{"token too long", `{"nextToken": "` + strings.Repeat("a", 1025) + `"}`, CodeValidation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := callSFN(t, url, "ListStateMachines", tt.body)
			if tt.errType != "" {
				assert.Equal(t, http.StatusBadRequest, status)
				assert.Equal(t, tt.errType, out["__type"], "%v", out)
				assert.NotEmpty(t, out["message"])
				return
			}
			require.Equal(t, http.StatusOK, status, "%v", out)
			assert.Equal(t, map[string]any{"stateMachines": []any{item}}, out, "one machine, no nextToken")
		})
	}

	// The SDK's paginator reads it: one page, one machine.
	p := sfn.NewListStateMachinesPaginator(sfnClient(url), &sfn.ListStateMachinesInput{MaxResults: 1})
	var got []sfntypes.StateMachineListItem
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		require.NoError(t, err)
		got = append(got, page.StateMachines...)
	}
	require.Len(t, got, 1)
	assert.Equal(t, r.StateMachineARN(), aws.ToString(got[0].StateMachineArn))
	assert.Equal(t, naming.StateMachineName, aws.ToString(got[0].Name))
	assert.Equal(t, sfntypes.StateMachineTypeStandard, got[0].Type)
	assert.Equal(t, epoch0, got[0].CreationDate.UTC())
}

// TestRedriveStatus: DescribeExecution's redriveStatus and
// redriveStatusReason (API reference,
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html):
// NOT_REDRIVABLE "if calling the RedriveExecution API action would return
// the ExecutionNotRedrivable error", with one of the documented reasons;
// RedriveExecution
// (https://docs.aws.amazon.com/step-functions/latest/apireference/API_RedriveExecution.html)
// takes an execution that is not SUCCEEDED, within "the redrivable period
// of 14 days" from its end and "the maximum open time of one year", with
// an event history count "less than 24,999".
func TestRedriveStatus(t *testing.T) {
	stop := epoch0.Add(time.Hour)
	ended := func(status asl.Status) asl.Description {
		return asl.Description{Status: status, StartDate: epoch0, StopDate: stop}
	}
	tests := []struct {
		name       string
		d          asl.Description
		events     int
		now        time.Time
		wantStatus string
		wantReason string
	}{
		{"running", asl.Description{Status: asl.StatusRunning, StartDate: epoch0}, 0, stop,
			"NOT_REDRIVABLE", "Execution is RUNNING and cannot be redriven"},
		{"succeeded", ended(asl.StatusSucceeded), 100, stop,
			"NOT_REDRIVABLE", "Execution is SUCCEEDED and cannot be redriven"},
		{"failed", ended(asl.StatusFailed), 100, stop, "REDRIVABLE", ""},
		{"aborted", ended(asl.StatusAborted), 100, stop, "REDRIVABLE", ""},
		{"timed out", ended(asl.StatusTimedOut), 100, stop, "REDRIVABLE", ""},
		{"failed, nearly 14 days ago", ended(asl.StatusFailed), 100, stop.Add(14*24*time.Hour - time.Second), "REDRIVABLE", ""},
		{"failed 14 days ago", ended(asl.StatusFailed), 100, stop.Add(14 * 24 * time.Hour),
			"NOT_REDRIVABLE", "Execution redrivable period exceeded"},
		{"started a year ago", asl.Description{Status: asl.StatusFailed, StartDate: epoch0, StopDate: epoch0.Add(364 * 24 * time.Hour)},
			100, epoch0.Add(365 * 24 * time.Hour), "NOT_REDRIVABLE", "Execution has exceeded the max execution time"},
		{"24998 events", ended(asl.StatusFailed), 24998, stop, "REDRIVABLE", ""},
		{"24999 events", ended(asl.StatusFailed), 24999, stop,
			"NOT_REDRIVABLE", "Execution history event limit exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, reason := redriveStatus(tt.d, tt.events, tt.now)
			assert.Equal(t, tt.wantStatus, status)
			assert.Equal(t, tt.wantReason, reason)
		})
	}
}

// TestDescribeExecutionOverHTTP: DescribeExecution's answer on the wire
// (API reference,
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html):
// startDate and stopDate are timestamps (epoch seconds); redriveCount is
// 0 for an execution never redriven ("If you have not yet redriven an
// execution, the redriveCount is 0"); redriveStatusReason comes only with
// NOT_REDRIVABLE; output "is set only if the execution succeeds". The
// request's includedData is ALL_DATA or METADATA_ONLY (API_IncludedData
// values); with METADATA_ONLY the execution's data, its input and output,
// is left out (absent, not empty); any other value is a
// ValidationException. ListExecutions' items carry redriveCount too
// (API_ExecutionListItem).
func TestDescribeExecutionOverHTTP(t *testing.T) {
	ctx := context.Background()
	// r-stopped's first task waits until the test has stopped it, so it
	// never takes the lock r-running needs, however the goroutines run.
	unblock := make(chan struct{})
	r, clk := newTestRegion(t, Options{Intercept: func(ctx context.Context, req execution.Request, next Invoke) (json.RawMessage, error) {
		if strings.Contains(req.Execution.Name, "r-stopped") {
			<-unblock
			return nil, &lambdaError{name: "Lambda.ServiceException", msg: "stopped while it ran"}
		}
		return next(ctx, req)
	}})
	url := serve(t, r)
	ok, err := r.StartRelease(ctx, releaseJSON(t, clk, "r-ok"))
	require.NoError(t, err)
	require.NoError(t, ok.Wait(ctx))
	require.Equal(t, asl.StatusSucceeded, ok.Describe().Status)
	hold := r.Hold()
	stopped, err := r.StartRelease(ctx, releaseJSON(t, clk, "r-stopped"))
	require.NoError(t, err)
	_, err = r.Stop(stopped.ARN(), "Operator", "stopped by the test")
	require.NoError(t, err)
	close(unblock)
	<-stopped.Done()
	running, err := r.StartRelease(ctx, releaseJSON(t, clk, "r-running"))
	require.NoError(t, err)
	t.Cleanup(hold)

	tests := []struct {
		name         string
		x            *asl.Execution
		includedData string
		status       string
		withData     bool
		redrive      string
		reason       string
	}{
		{"succeeded", ok, "", "SUCCEEDED", true, "NOT_REDRIVABLE", "Execution is SUCCEEDED and cannot be redriven"},
		{"succeeded ALL_DATA", ok, "ALL_DATA", "SUCCEEDED", true, "NOT_REDRIVABLE", "Execution is SUCCEEDED and cannot be redriven"},
		{"succeeded METADATA_ONLY", ok, "METADATA_ONLY", "SUCCEEDED", false, "NOT_REDRIVABLE", "Execution is SUCCEEDED and cannot be redriven"},
		{"aborted", stopped, "", "ABORTED", true, "REDRIVABLE", ""},
		{"aborted METADATA_ONLY", stopped, "METADATA_ONLY", "ABORTED", false, "REDRIVABLE", ""},
		{"running", running, "", "RUNNING", true, "NOT_REDRIVABLE", "Execution is RUNNING and cannot be redriven"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := map[string]any{"executionArn": tt.x.ARN()}
			if tt.includedData != "" {
				body["includedData"] = tt.includedData
			}
			status, out := callSFN(t, url, "DescribeExecution", mustJSON(t, body))
			require.Equal(t, http.StatusOK, status, "%v", out)
			d := tt.x.Describe()
			assert.Equal(t, tt.status, out["status"])
			assert.IsType(t, float64(0), out["startDate"])
			assert.Equal(t, float64(0), out["redriveCount"])
			assert.Equal(t, tt.redrive, out["redriveStatus"])
			if tt.reason == "" {
				assert.NotContains(t, out, "redriveStatusReason")
			} else {
				assert.Equal(t, tt.reason, out["redriveStatusReason"])
			}
			if tt.status == "RUNNING" {
				assert.NotContains(t, out, "stopDate")
			} else {
				assert.IsType(t, float64(0), out["stopDate"])
			}
			if !tt.withData {
				for _, k := range []string{"input", "inputDetails", "output", "outputDetails"} {
					assert.NotContains(t, out, k)
				}
				return
			}
			assert.Equal(t, d.Input, out["input"])
			assert.Equal(t, map[string]any{"included": true}, out["inputDetails"])
			if tt.status == "SUCCEEDED" {
				assert.Equal(t, d.Output, out["output"])
				assert.Equal(t, map[string]any{"included": true}, out["outputDetails"])
			} else {
				assert.NotContains(t, out, "output")
				assert.NotContains(t, out, "outputDetails")
			}
		})
	}

	status, out := callSFN(t, url, "DescribeExecution", mustJSON(t, map[string]any{"executionArn": ok.ARN(), "includedData": "EVERYTHING"}))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, CodeValidation, out["__type"])

	status, out = callSFN(t, url, "ListExecutions", mustJSON(t, map[string]any{"stateMachineArn": r.StateMachineARN()}))
	require.Equal(t, http.StatusOK, status)
	require.Len(t, out["executions"], 3)
	for _, item := range out["executions"].([]any) {
		assert.Equal(t, float64(0), item.(map[string]any)["redriveCount"])
	}

	// The SDK reads the redrive fields.
	desc, err := sfnClient(url).DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(stopped.ARN())})
	require.NoError(t, err)
	assert.Equal(t, sfntypes.ExecutionRedriveStatusRedrivable, desc.RedriveStatus)
	assert.Equal(t, int32(0), aws.ToInt32(desc.RedriveCount))
	assert.Nil(t, desc.RedriveStatusReason)
	meta, err := sfnClient(url).DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(ok.ARN()), IncludedData: sfntypes.IncludedDataMetadataOnly})
	require.NoError(t, err)
	assert.Nil(t, meta.Input)
	assert.Nil(t, meta.Output)
	assert.Equal(t, sfntypes.ExecutionRedriveStatusNotRedrivable, meta.RedriveStatus)
}

// TestHistoryWithoutData: GetExecutionHistory with includeExecutionData
// false (API reference,
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_GetExecutionHistory.html:
// "You can select whether execution data (input or output of a history
// event) is returned. The default is true.") leaves every input, output
// and task parameters out of the events, absent rather than empty, and
// keeps everything else; with true, or by default, they are there.
func TestHistoryWithoutData(t *testing.T) {
	ctx := context.Background()
	r, clk := newTestRegion(t, Options{})
	url := serve(t, r)
	x, err := r.StartRelease(ctx, releaseJSON(t, clk, "r1"))
	require.NoError(t, err)
	require.NoError(t, x.Wait(ctx))
	payloads := func(events []any) int {
		n := 0
		for _, ev := range events {
			for k, v := range ev.(map[string]any) {
				if !strings.HasSuffix(k, "EventDetails") {
					continue
				}
				for _, f := range []string{"input", "output", "parameters"} {
					if _, ok := v.(map[string]any)[f]; ok {
						n++
					}
				}
			}
		}
		return n
	}
	tests := []struct {
		name        string
		include     *bool
		wantPayload bool
	}{
		{"default", nil, true},
		{"true", aws.Bool(true), true},
		{"false", aws.Bool(false), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := map[string]any{"executionArn": x.ARN(), "maxResults": 1000}
			if tt.include != nil {
				body["includeExecutionData"] = *tt.include
			}
			status, out := callSFN(t, url, "GetExecutionHistory", mustJSON(t, body))
			require.Equal(t, http.StatusOK, status, "%v", out)
			events := out["events"].([]any)
			require.Len(t, events, len(x.History()))
			if tt.wantPayload {
				assert.Positive(t, payloads(events))
				return
			}
			assert.Zero(t, payloads(events), "no input, output or parameters")
			first := events[0].(map[string]any)
			assert.Equal(t, "ExecutionStarted", first["type"])
			assert.Equal(t, map[string]any{"inputDetails": map[string]any{"truncated": false}, "roleArn": r.roleARN()},
				first["executionStartedEventDetails"])
		})
	}
}

// TestStartExecutionInputVerbatim: DescribeExecution's input and the
// ExecutionStarted event's input are the string StartExecution was given,
// byte for byte (API reference, API_StartExecution: input is "The string
// that contains the JSON input data for the execution",
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html;
// API_DescribeExecution's input "The string that contains the JSON input
// data of the execution"), however it is spelled; the deploy still runs.
func TestStartExecutionInputVerbatim(t *testing.T) {
	ctx := context.Background()
	r, clk := newTestRegion(t, Options{})
	url := serve(t, r)
	sfc := sfnClient(url)
	compact := proved(t, r, releaseJSON(t, clk, "r1"))
	var v any
	require.NoError(t, json.Unmarshal(compact, &v))
	indented, err := json.MarshalIndent(v, "", "    ") // keys sorted, indented
	require.NoError(t, err)
	require.NotEqual(t, string(compact), string(indented))
	require.NoError(t, ledger.New(r.S3(), r.Bucket()).PutRelease(ctx, testProject, testConfig, "r1", compact))

	started, err := sfc.StartExecution(ctx, &sfn.StartExecutionInput{
		StateMachineArn: aws.String(r.StateMachineARN()), Name: aws.String("r1"), Input: aws.String(string(indented)),
	})
	require.NoError(t, err)
	arn := aws.ToString(started.ExecutionArn)
	d, err := r.Wait(ctx, arn)
	require.NoError(t, err)
	require.Equal(t, asl.StatusSucceeded, d.Status, "%s: %s", d.Error, d.Cause)

	desc, err := sfc.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	require.NoError(t, err)
	assert.Equal(t, string(indented), aws.ToString(desc.Input))
	h, err := sfc.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), MaxResults: 1})
	require.NoError(t, err)
	require.Len(t, h.Events, 1)
	require.Equal(t, sfntypes.HistoryEventTypeExecutionStarted, h.Events[0].Type)
	assert.Equal(t, string(indented), aws.ToString(h.Events[0].ExecutionStartedEventDetails.Input))
	// ExecutionStartedEventDetails' roleArn: "The Amazon Resource Name
	// (ARN) of the IAM role used for executing Lambda tasks"
	// (API_ExecutionStartedEventDetails), the state machine's role.
	assert.Equal(t, r.roleARN(), aws.ToString(h.Events[0].ExecutionStartedEventDetails.RoleArn))
}
