package region

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
// --output json` against the region at url (see runAWS), requires it to
// exit 0 and returns its answer decoded (JSON numbers as float64, so a
// test sees the types the CLI printed).
func awsCLI(t *testing.T, aws, url string, args ...string) map[string]any {
	t.Helper()
	return awsJSON(t, aws, url, append([]string{"stepfunctions"}, args...)...)
}

// awsJSON runs `aws ARGS` (see runAWS), requires it to exit 0 and returns
// its answer decoded; an empty answer is an empty map.
func awsJSON(t *testing.T, aws, url string, args ...string) map[string]any {
	t.Helper()
	stdout, stderr, err := runAWS(t, aws, url, args...)
	require.NoError(t, err, "aws %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), stdout, stderr)
	out := map[string]any{}
	if strings.TrimSpace(stdout) != "" {
		require.NoError(t, json.Unmarshal([]byte(stdout), &out), "the CLI's output:\n%s", stdout)
	}
	return out
}

// runAWS runs `aws ARGS --endpoint-url URL --output json` against the
// region at url with fake credentials and no configuration or instance
// metadata lookups, and returns what it printed and how it exited.
func runAWS(t *testing.T, aws, url string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, aws, append(args, "--endpoint-url", url, "--output", "json")...)
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
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
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

// TestAWSCLIS3 drives the region's S3 API (its deployer bucket, versioned
// as in AWS) with the AWS CLI's s3api, where a user pokes it, and checks
// what S3 answers (Amazon S3 API Reference; each is also checked against
// moto by internal/proof/conformance, TestS3ParityAgainstMoto):
//   - an object put without --content-type is binary/octet-stream on
//     head-object and get-object (PutObject, ContentType), never a type
//     sniffed from its bytes;
//   - a multipart object's ETag is the MD5 of its parts' MD5s and "-2"
//     (Object, ETag: "not an MD5 digest") on head-object, get-object and
//     list-objects-v2;
//   - an answer's Date is on the clock its Last-Modified follows (Common
//     Response Headers, Date: "the date and time Amazon S3 responded"):
//     the region's virtual clock, not the wall;
//   - list-object-versions lists keys in order, each newest first
//     (ListObjectVersions);
//   - get-object-attributes answers the attributes asked for
//     (GetObjectAttributes);
//   - deleting the delete marker by its version id undeletes the object
//     ("Working with delete markers", Amazon S3 User Guide);
//   - a missing key is NoSuchKey, "The specified key does not exist."
//     (Error responses).
func TestAWSCLIS3(t *testing.T) {
	aws, err := exec.LookPath("aws")
	if err != nil {
		t.Skip("the AWS CLI (aws) is not on PATH: install it to check the region's S3 API with it")
	}
	r, clk := newTestRegion(t, Options{})
	url := serve(t, r)
	b := r.Bucket()
	dir := t.TempDir()
	file := func(name string, body []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, body, 0o644))
		return p
	}
	s3api := func(args ...string) map[string]any {
		t.Helper()
		return awsJSON(t, aws, url, append([]string{"s3api"}, args...)...)
	}
	put := func(key, body string) map[string]any {
		t.Helper()
		return s3api("put-object", "--bucket", b, "--key", key, "--body", file("body", []byte(body)))
	}

	put("cli/untyped", "some bytes")
	assert.Equal(t, "binary/octet-stream", s3api("head-object", "--bucket", b, "--key", "cli/untyped")["ContentType"])
	got := s3api("get-object", "--bucket", b, "--key", "cli/untyped", filepath.Join(dir, "untyped"))
	assert.Equal(t, "binary/octet-stream", got["ContentType"], "not sniffed from the bytes (text/plain)")

	up := s3api("create-multipart-upload", "--bucket", b, "--key", "cli/big")
	id, _ := up["UploadId"].(string)
	parts := [][]byte{bytes.Repeat([]byte("x"), 5<<20), []byte("tail")}
	var done []map[string]any
	var sums []byte
	for i, p := range parts {
		out := s3api("upload-part", "--bucket", b, "--key", "cli/big", "--upload-id", id,
			"--part-number", fmt.Sprint(i+1), "--body", file(fmt.Sprintf("part%d", i), p))
		done = append(done, map[string]any{"ETag": out["ETag"], "PartNumber": i + 1})
		sum := md5.Sum(p)
		sums = append(sums, sum[:]...)
	}
	manifest, err := json.Marshal(map[string]any{"Parts": done})
	require.NoError(t, err)
	s3api("complete-multipart-upload", "--bucket", b, "--key", "cli/big", "--upload-id", id,
		"--multipart-upload", "file://"+file("parts.json", manifest))
	whole := md5.Sum(sums)
	multipart := `"` + hex.EncodeToString(whole[:]) + `-2"`
	assert.Equal(t, multipart, s3api("head-object", "--bucket", b, "--key", "cli/big")["ETag"])
	assert.Equal(t, multipart, s3api("get-object", "--bucket", b, "--key", "cli/big", filepath.Join(dir, "big"))["ETag"])
	listed := s3api("list-objects-v2", "--bucket", b, "--prefix", "cli/big")["Contents"].([]any)
	require.Len(t, listed, 1)
	assert.Equal(t, multipart, listed[0].(map[string]any)["ETag"])

	put("cli/dated", "dated")
	clk.Advance(90 * time.Minute)
	date, modified := responseDates(t, aws, url, "s3api", "head-object", "--bucket", b, "--key", "cli/dated")
	assert.Equal(t, epoch0, modified, "Last-Modified: when the region's clock stood at the put")
	assert.Equal(t, epoch0.Add(90*time.Minute), date, "Date: the region's clock now, 90 minutes on")

	for _, kv := range [][2]string{{"cli/v/b", "b1"}, {"cli/v/a", "a1"}, {"cli/v/b", "b2"}, {"cli/v/a", "a2"}} {
		put(kv[0], kv[1])
	}
	var order []string
	for _, v := range s3api("list-object-versions", "--bucket", b, "--prefix", "cli/v/")["Versions"].([]any) {
		v := v.(map[string]any)
		order = append(order, fmt.Sprintf("%s latest=%v", v["Key"], v["IsLatest"]))
	}
	assert.Equal(t, []string{"cli/v/a latest=true", "cli/v/a latest=false", "cli/v/b latest=true", "cli/v/b latest=false"}, order)

	put("cli/attrs", "held by r1")
	attrs := s3api("get-object-attributes", "--bucket", b, "--key", "cli/attrs", "--object-attributes", "ETag", "ObjectSize", "StorageClass")
	sum := md5.Sum([]byte("held by r1"))
	assert.Equal(t, hex.EncodeToString(sum[:]), attrs["ETag"])
	assert.Equal(t, float64(10), attrs["ObjectSize"])
	assert.Equal(t, "STANDARD", attrs["StorageClass"])

	marker := s3api("delete-object", "--bucket", b, "--key", "cli/attrs")
	require.Equal(t, true, marker["DeleteMarker"])
	s3api("delete-object", "--bucket", b, "--key", "cli/attrs", "--version-id", marker["VersionId"].(string))
	assert.Equal(t, `"`+hex.EncodeToString(sum[:])+`"`, s3api("head-object", "--bucket", b, "--key", "cli/attrs")["ETag"], "undeleted")

	_, stderr, err := runAWS(t, aws, url, "s3api", "get-object", "--bucket", b, "--key", "cli/none", filepath.Join(dir, "out"))
	require.Error(t, err)
	assert.Contains(t, stderr, "An error occurred (NoSuchKey) when calling the GetObject operation: The specified key does not exist.")
}

// responseDates runs `aws ARGS --debug` (see runAWS), requires it to
// exit 0, and returns the Date and Last-Modified headers of the answer
// as botocore logged them.
func responseDates(t *testing.T, aws, url string, args ...string) (date, modified time.Time) {
	t.Helper()
	stdout, stderr, err := runAWS(t, aws, url, append(args, "--debug")...)
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	header := func(name string) time.Time {
		m := regexp.MustCompile(`Response headers: \{.*'` + name + `': '([^']+)'`).FindStringSubmatch(stderr)
		require.NotNil(t, m, "no %s header in the CLI's debug log:\n%s", name, stderr)
		at, err := http.ParseTime(m[1])
		require.NoError(t, err)
		return at.UTC()
	}
	return header("Date"), header("Last-Modified")
}
