package region

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
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
		"level":                limits.StateMachineLogLevel,
		"includeExecutionData": limits.StateMachineLogExecutionData,
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
			assert.Equal(t, map[string]any{"enabled": limits.StateMachineTracing}, out["tracingConfiguration"])
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
