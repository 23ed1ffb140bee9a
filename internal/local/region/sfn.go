package region

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/sameorigin"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/tuning"
)

// The Step Functions API's page sizes.
const (
	defaultPageSize = 100
	maxPageSize     = 1000
	// maxTokenLength is the longest nextToken (PageToken) a request may
	// carry.
	maxTokenLength = 1024
	// maxRequestBytes bounds a request body: a 256 KiB input, escaped.
	maxRequestBytes = 2 << 20
	jsonContentType = "application/x-amz-json-1.0"
	// stateMachineType is the deploy state machine's type.
	stateMachineType = "STANDARD"
)

// epoch is a time as the AWS JSON protocols write timestamps: seconds since
// the Unix epoch, with milliseconds.
type epoch time.Time

func (e epoch) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(float64(time.Time(e).UnixMilli())/1000, 'f', -1, 64)), nil
}

func epochOf(t time.Time) *epoch {
	if t.IsZero() {
		return nil
	}
	e := epoch(t)
	return &e
}

type dataDetails struct {
	Included bool `json:"included"`
}

// executionListItem is an execution as ListExecutions lists it.
type executionListItem struct {
	ExecutionArn    string `json:"executionArn"`
	StateMachineArn string `json:"stateMachineArn"`
	Name            string `json:"name"`
	Status          string `json:"status"`
	StartDate       *epoch `json:"startDate"`
	StopDate        *epoch `json:"stopDate,omitempty"`
	// RedriveCount is always 0: the region does not redrive executions.
	RedriveCount int `json:"redriveCount"`
}

// executionDescription is an execution as DescribeExecution describes it:
// the list item's fields (inlined, first), the data (absent when the
// request asks for metadata only) and whether it could be redriven.
type executionDescription struct {
	executionListItem
	Input               *string      `json:"input,omitempty"`
	InputDetails        *dataDetails `json:"inputDetails,omitempty"`
	Output              *string      `json:"output,omitempty"`
	OutputDetails       *dataDetails `json:"outputDetails,omitempty"`
	Error               *string      `json:"error,omitempty"`
	Cause               *string      `json:"cause,omitempty"`
	RedriveStatus       string       `json:"redriveStatus"`
	RedriveStatusReason *string      `json:"redriveStatusReason,omitempty"`
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func listItem(d asl.Description) executionListItem {
	return executionListItem{
		ExecutionArn: d.ExecutionARN, StateMachineArn: d.StateMachineARN, Name: d.Name,
		Status: string(d.Status), StartDate: epochOf(d.StartDate), StopDate: epochOf(d.StopDate),
	}
}

// describe is the DescribeExecution answer for the execution described by
// d, with its history of events events, at now; withData false leaves out
// its input and output.
func describe(d asl.Description, events int, now time.Time, withData bool) executionDescription {
	out := executionDescription{
		executionListItem: listItem(d), Error: optional(d.Error), Cause: optional(d.Cause),
	}
	if withData {
		out.Input, out.InputDetails = &d.Input, &dataDetails{Included: true}
		if d.Status == asl.StatusSucceeded {
			out.Output, out.OutputDetails = &d.Output, &dataDetails{Included: true}
		}
	}
	status, reason := redriveStatus(d, events, now)
	out.RedriveStatus, out.RedriveStatusReason = status, optional(reason)
	return out
}

// What RedriveExecution requires of an execution (the API reference,
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_RedriveExecution.html):
// it ended less than redrivablePeriod ago, it started less than
// maxExecutionTime ago, and its history has fewer than redriveEventLimit
// events.
const (
	redrivablePeriod  = 14 * 24 * time.Hour
	maxExecutionTime  = 365 * 24 * time.Hour
	redriveEventLimit = limits.StepFunctionsHistoryEvents - 1
)

// redriveStatus is DescribeExecution's redriveStatus of the execution d,
// with events history events, at now: NOT_REDRIVABLE with the reason AWS
// gives when RedriveExecution would refuse it, else REDRIVABLE (AWS gives
// a reason only with NOT_REDRIVABLE). The region itself does not serve
// RedriveExecution.
func redriveStatus(d asl.Description, events int, now time.Time) (status, reason string) {
	const not = "NOT_REDRIVABLE"
	switch {
	case d.Status == asl.StatusRunning || d.Status == asl.StatusSucceeded:
		return not, fmt.Sprintf("Execution is %s and cannot be redriven", d.Status)
	case events >= redriveEventLimit:
		return not, "Execution history event limit exceeded"
	case now.Sub(d.StartDate) >= maxExecutionTime:
		return not, "Execution has exceeded the max execution time"
	case now.Sub(d.StopDate) >= redrivablePeriod:
		return not, "Execution redrivable period exceeded"
	}
	return "REDRIVABLE", ""
}

// serveSFN serves one Step Functions API call.
func (r *Region) serveSFN(w http.ResponseWriter, req *http.Request, op string) {
	if req.Method != http.MethodPost {
		writeAPIError(w, apiErrorf(CodeSerialization, "the Step Functions API takes POST requests, not %s", req.Method))
		return
	}
	if err := sameorigin.ContentType(req, jsonContentType); err != nil {
		writeAPIError(w, apiErrorf(CodeSerialization, "%v", err))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxRequestBytes))
	if err != nil {
		writeAPIError(w, apiErrorf(CodeSerialization, "reading the request: %v", err))
		return
	}
	if len(body) == 0 {
		body = []byte("{}")
	}
	var out any
	var apiErr *APIError
	switch op {
	case "StartExecution":
		out, apiErr = decodeAnd(body, r.apiStartExecution)
	case "DescribeExecution":
		out, apiErr = decodeAnd(body, r.apiDescribeExecution)
	case "GetExecutionHistory":
		out, apiErr = decodeAnd(body, r.apiGetExecutionHistory)
	case "ListExecutions":
		out, apiErr = decodeAnd(body, r.apiListExecutions)
	case "StopExecution":
		out, apiErr = decodeAnd(body, r.apiStopExecution)
	case "DescribeStateMachine":
		out, apiErr = decodeAnd(body, r.apiDescribeStateMachine)
	case "ListStateMachines":
		out, apiErr = decodeAnd(body, r.apiListStateMachines)
	case "SendTaskSuccess":
		out, apiErr = decodeAnd(body, r.apiSendTaskSuccess)
	case "SendTaskFailure":
		out, apiErr = decodeAnd(body, r.apiSendTaskFailure)
	default:
		apiErr = apiErrorf(CodeUnknownOperation, "the local region does not serve %s%s", sfnTargetPrefix, op)
	}
	if apiErr != nil {
		writeAPIError(w, apiErr)
		return
	}
	b, err := json.Marshal(out)
	if err != nil {
		writeAPIError(w, apiErrorf(CodeInternal, "encoding the response: %v", err))
		return
	}
	writeJSON(w, http.StatusOK, b)
}

// decodeAnd decodes a request body into In and calls fn.
func decodeAnd[In any](body []byte, fn func(In) (any, *APIError)) (any, *APIError) {
	var in In
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, apiErrorf(CodeSerialization, "the request body does not decode: %v", err)
	}
	return fn(in)
}

// writeAPIError writes an error in the AWS JSON protocol's shape.
func writeAPIError(w http.ResponseWriter, e *APIError) {
	b, _ := json.Marshal(struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}{e.Code, e.Message})
	writeJSON(w, e.status(), b)
}

// writeJSON writes a response of the AWS JSON protocol: status and body b,
// with a fresh request id.
func writeJSON(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", jsonContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Header().Set("X-Amzn-Requestid", requestID())
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func requestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// checkStateMachine checks a state machine ARN of a request.
func (r *Region) checkStateMachine(arn string) *APIError {
	if !validStateMachineARN(arn) {
		return apiErrorf(CodeInvalidArn, "Invalid Arn: '%s'", arn)
	}
	if arn != r.info.StateMachineARN {
		return apiErrorf(CodeStateMachineDoesNotExist, "State Machine Does Not Exist: '%s'", arn)
	}
	return nil
}

func asAPIError(err error) *APIError {
	if err == nil {
		return nil
	}
	if e, ok := err.(*APIError); ok {
		return e
	}
	return apiErrorf(CodeInternal, "%v", err)
}

func checkPageSize(n int32) (int, *APIError) {
	switch {
	case n < 0 || n > maxPageSize:
		return 0, apiErrorf(CodeValidation, "1 validation error detected: Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value between 0 and %d", n, maxPageSize)
	case n == 0:
		return defaultPageSize, nil
	}
	return int(n), nil
}

// Page tokens name the request they continue and the position after the
// last item returned; a token of another request is InvalidToken.
func encodeToken(parts ...string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strings.Join(parts, "\n")))
}

func decodeToken(token string, want ...string) (int64, *APIError) {
	if len(token) > maxTokenLength {
		return 0, apiErrorf(CodeValidation, "1 validation error detected: Value at 'nextToken' failed to satisfy constraint: Member must have length less than or equal to %d", maxTokenLength)
	}
	bad := apiErrorf(CodeInvalidToken, "Invalid Token: '%s'", token)
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return 0, bad
	}
	parts := strings.Split(string(b), "\n")
	if len(parts) != len(want)+1 {
		return 0, bad
	}
	for i, w := range want {
		if parts[i] != w {
			return 0, bad
		}
	}
	pos, err := strconv.ParseInt(parts[len(want)], 10, 64)
	if err != nil {
		return 0, bad
	}
	return pos, nil
}

type startExecutionInput struct {
	StateMachineArn string  `json:"stateMachineArn"`
	Name            *string `json:"name"`
	Input           *string `json:"input"`
}

func (r *Region) apiStartExecution(in startExecutionInput) (any, *APIError) {
	if e := r.checkStateMachine(in.StateMachineArn); e != nil {
		return nil, e
	}
	name := requestID()
	if in.Name != nil {
		name = *in.Name
	}
	var input []byte
	if in.Input != nil {
		input = []byte(*in.Input)
	}
	x, _, err := r.Start(name, input)
	if err != nil {
		return nil, asAPIError(err)
	}
	return struct {
		ExecutionArn string `json:"executionArn"`
		StartDate    *epoch `json:"startDate"`
	}{x.ARN(), epochOf(x.Describe().StartDate)}, nil
}

type describeExecutionInput struct {
	ExecutionArn string `json:"executionArn"`
	IncludedData string `json:"includedData"`
}

func (r *Region) apiDescribeExecution(in describeExecutionInput) (any, *APIError) {
	withData, e := checkIncludedData(in.IncludedData)
	if e != nil {
		return nil, e
	}
	x, err := r.Execution(in.ExecutionArn)
	if err != nil {
		return nil, asAPIError(err)
	}
	d := x.Describe()
	events := 0
	if d.Status != asl.StatusRunning {
		events = len(x.History())
	}
	return describe(d, events, r.clk.Now(), withData), nil
}

type getExecutionHistoryInput struct {
	ExecutionArn         string `json:"executionArn"`
	MaxResults           int32  `json:"maxResults"`
	NextToken            string `json:"nextToken"`
	ReverseOrder         bool   `json:"reverseOrder"`
	IncludeExecutionData *bool  `json:"includeExecutionData"`
}

func (r *Region) apiGetExecutionHistory(in getExecutionHistoryInput) (any, *APIError) {
	x, err := r.Execution(in.ExecutionArn)
	if err != nil {
		return nil, asAPIError(err)
	}
	size, e := checkPageSize(in.MaxResults)
	if e != nil {
		return nil, e
	}
	order := strconv.FormatBool(in.ReverseOrder)
	events := x.History()
	// after is the id of the last event returned before: 0 (forward) or
	// past the end (reverse) on the first page.
	after := int64(0)
	if in.ReverseOrder {
		after = int64(len(events)) + 1
	}
	if in.NextToken != "" {
		if after, e = decodeToken(in.NextToken, "history", x.ARN(), order); e != nil {
			return nil, e
		}
	}
	page := historyPage(events, after, size, in.ReverseOrder)
	out := struct {
		Events    []asl.Event `json:"events"`
		NextToken string      `json:"nextToken,omitempty"`
	}{Events: page}
	if last, more := historyMore(events, page, size, in.ReverseOrder); more {
		out.NextToken = encodeToken("history", x.ARN(), order, strconv.FormatInt(last, 10))
	}
	if in.IncludeExecutionData != nil && !*in.IncludeExecutionData {
		for i := range out.Events {
			out.Events[i] = withoutData(out.Events[i])
		}
	}
	return out, nil
}

// historyPage returns up to size events after the event of id after, in
// the order asked (ids are 1-based positions in events).
func historyPage(events []asl.Event, after int64, size int, reverse bool) []asl.Event {
	page := make([]asl.Event, 0, size)
	if reverse {
		for i := min(after-1, int64(len(events))); i >= 1 && len(page) < size; i-- {
			page = append(page, events[i-1])
		}
		return page
	}
	for i := max(after+1, 1); i <= int64(len(events)) && len(page) < size; i++ {
		page = append(page, events[i-1])
	}
	return page
}

// historyMore says whether events remain after a full page, and the id of
// the page's last event, which the next token carries.
func historyMore(events, page []asl.Event, size int, reverse bool) (last int64, more bool) {
	if len(page) != size || len(page) == 0 {
		return 0, false
	}
	last = page[len(page)-1].ID
	if reverse {
		return last, last > 1
	}
	return last, last < int64(len(events))
}

// withoutData returns ev without the execution's data (inputs, outputs,
// parameters), as GetExecutionHistory with includeExecutionData false: the
// emptied payloads are left out of the answer (the *Details saying the
// data was not truncated stay).
func withoutData(ev asl.Event) asl.Event {
	return withPayloads(ev, func(string) string { return "" })
}

// withPayloads returns ev with each of its payloads (inputs, outputs,
// parameters) replaced by f of it (an empty one is left out of the
// answer); ev's details are copied, not changed (the history's events are
// shared).
func withPayloads(ev asl.Event, f func(string) string) asl.Event {
	ev.ExecutionStarted = mapped(ev.ExecutionStarted, f, func(d *asl.ExecutionStartedDetails) *string { return &d.Input })
	ev.ExecutionSucceeded = mapped(ev.ExecutionSucceeded, f, func(d *asl.ExecutionSucceededDetails) *string { return &d.Output })
	ev.StateEntered = mapped(ev.StateEntered, f, func(d *asl.StateEnteredDetails) *string { return &d.Input })
	ev.StateExited = mapped(ev.StateExited, f, func(d *asl.StateExitedDetails) *string { return &d.Output })
	ev.TaskScheduled = mapped(ev.TaskScheduled, f, func(d *asl.TaskScheduledDetails) *string { return &d.Parameters })
	ev.TaskSucceeded = mapped(ev.TaskSucceeded, f, func(d *asl.TaskSucceededDetails) *string { return &d.Output })
	ev.LambdaFunctionScheduled = mapped(ev.LambdaFunctionScheduled, f, func(d *asl.LambdaScheduledDetails) *string { return &d.Input })
	ev.LambdaFunctionSucceeded = mapped(ev.LambdaFunctionSucceeded, f, func(d *asl.ExecutionSucceededDetails) *string { return &d.Output })
	return ev
}

// mapped returns a copy of *d with the payload field that data points at
// replaced by f of it, or nil for nil; *d itself is left as it was.
func mapped[T any](d *T, f func(string) string, data func(*T) *string) *T {
	if d == nil {
		return nil
	}
	c := *d
	p := data(&c)
	*p = f(*p)
	return &c
}

type listExecutionsInput struct {
	StateMachineArn string `json:"stateMachineArn"`
	StatusFilter    string `json:"statusFilter"`
	RedriveFilter   string `json:"redriveFilter"`
	MaxResults      int32  `json:"maxResults"`
	NextToken       string `json:"nextToken"`
}

func (r *Region) apiListExecutions(in listExecutionsInput) (any, *APIError) {
	if e := r.checkStateMachine(in.StateMachineArn); e != nil {
		return nil, e
	}
	switch asl.Status(in.StatusFilter) {
	case "", asl.StatusRunning, asl.StatusSucceeded, asl.StatusFailed, asl.StatusTimedOut, asl.StatusAborted, "PENDING_REDRIVE":
	default:
		return nil, apiErrorf(CodeValidation, "1 validation error detected: Value '%s' at 'statusFilter' failed to satisfy constraint: Member must satisfy enum value set: [SUCCEEDED, TIMED_OUT, PENDING_REDRIVE, FAILED, RUNNING, ABORTED]", in.StatusFilter)
	}
	// redriveFilter: "Sets a filter to list executions based on whether or
	// not they have been redriven" (ListExecutions, AWS Step Functions API
	// Reference); the region redrives none, so REDRIVEN lists none.
	switch in.RedriveFilter {
	case "", "REDRIVEN", "NOT_REDRIVEN":
	default:
		return nil, apiErrorf(CodeValidation, "1 validation error detected: Value '%s' at 'redriveFilter' failed to satisfy constraint: Member must satisfy enum value set: [REDRIVEN, NOT_REDRIVEN]", in.RedriveFilter)
	}
	filter := in.StatusFilter + "/" + in.RedriveFilter
	size, e := checkPageSize(in.MaxResults)
	if e != nil {
		return nil, e
	}
	// before is the sequence number of the last execution returned: the
	// page goes on with older ones.
	before := int64(1<<63 - 1)
	if in.NextToken != "" {
		if before, e = decodeToken(in.NextToken, "executions", filter); e != nil {
			return nil, e
		}
	}
	r.mu.Lock()
	all := make([]*entry, len(r.order))
	copy(all, r.order)
	r.mu.Unlock()
	items := []executionListItem{}
	var last int64
	more := false
	for i := len(all) - 1; i >= 0; i-- {
		e := all[i]
		if e.seq >= before {
			continue
		}
		d := e.x.Describe()
		if in.StatusFilter != "" && string(d.Status) != in.StatusFilter {
			continue
		}
		item := listItem(d)
		if in.RedriveFilter != "" && (item.RedriveCount > 0) != (in.RedriveFilter == "REDRIVEN") {
			continue
		}
		if len(items) == size {
			more = true
			break
		}
		items = append(items, item)
		last = e.seq
	}
	out := struct {
		Executions []executionListItem `json:"executions"`
		NextToken  string              `json:"nextToken,omitempty"`
	}{Executions: items}
	if more {
		out.NextToken = encodeToken("executions", filter, strconv.FormatInt(last, 10))
	}
	return out, nil
}

type stopExecutionInput struct {
	ExecutionArn string `json:"executionArn"`
	Error        string `json:"error"`
	Cause        string `json:"cause"`
}

func (r *Region) apiStopExecution(in stopExecutionInput) (any, *APIError) {
	if len(in.Error) > 256 || len(in.Cause) > 32768 {
		return nil, apiErrorf(CodeValidation, "1 validation error detected: error must have at most 256 characters and cause at most 32768")
	}
	d, err := r.Stop(in.ExecutionArn, in.Error, in.Cause)
	if err != nil {
		return nil, asAPIError(err)
	}
	return struct {
		StopDate *epoch `json:"stopDate"`
	}{epochOf(d.StopDate)}, nil
}

type listStateMachinesInput struct {
	MaxResults int32  `json:"maxResults"`
	NextToken  string `json:"nextToken"`
}

// stateMachineListItem is a state machine as ListStateMachines lists it.
type stateMachineListItem struct {
	StateMachineArn string `json:"stateMachineArn"`
	Name            string `json:"name"`
	Type            string `json:"type"`
	CreationDate    *epoch `json:"creationDate"`
}

// apiListStateMachines lists the region's one state machine, in pages as
// ListExecutions does: maxResults 0 (the default page of 100) to 1000,
// and a nextToken only when more machines follow the page.
func (r *Region) apiListStateMachines(in listStateMachinesInput) (any, *APIError) {
	size, e := checkPageSize(in.MaxResults)
	if e != nil {
		return nil, e
	}
	machines := []stateMachineListItem{{
		StateMachineArn: r.info.StateMachineARN, Name: naming.StateMachineName,
		Type: stateMachineType, CreationDate: epochOf(r.created),
	}}
	// from is the position of the first machine of the page.
	from := int64(0)
	if in.NextToken != "" {
		if from, e = decodeToken(in.NextToken, "statemachines"); e != nil {
			return nil, e
		}
		if from < 0 || from > int64(len(machines)) {
			return nil, apiErrorf(CodeInvalidToken, "Invalid Token: '%s'", in.NextToken)
		}
	}
	end := min(from+int64(size), int64(len(machines)))
	out := struct {
		StateMachines []stateMachineListItem `json:"stateMachines"`
		NextToken     string                 `json:"nextToken,omitempty"`
	}{StateMachines: machines[from:end]}
	if end < int64(len(machines)) {
		out.NextToken = encodeToken("statemachines", strconv.FormatInt(end, 10))
	}
	return out, nil
}

type describeStateMachineInput struct {
	StateMachineArn string `json:"stateMachineArn"`
	IncludedData    string `json:"includedData"`
}

// Values of a request's includedData.
const (
	includedAllData      = "ALL_DATA"
	includedMetadataOnly = "METADATA_ONLY"
)

// checkIncludedData checks a request's includedData (empty is ALL_DATA)
// and reports whether it asks for the data.
func checkIncludedData(v string) (bool, *APIError) {
	switch v {
	case "", includedAllData:
		return true, nil
	case includedMetadataOnly:
		return false, nil
	}
	return false, apiErrorf(CodeValidation, "1 validation error detected: Value '%s' at 'includedData' failed to satisfy constraint: Member must satisfy enum value set: [%s, %s]", v, includedAllData, includedMetadataOnly)
}

// roleARN is the state machine's role, as DescribeStateMachine and every
// ExecutionStarted event name it.
func (r *Region) roleARN() string { return naming.RoleARN(r.info.Account, naming.StateMachineName) }

// loggingConfiguration, logDestination and tracingConfiguration are the
// state machine's LoggingConfiguration and TracingConfiguration.
type loggingConfiguration struct {
	Level                string           `json:"level"`
	IncludeExecutionData bool             `json:"includeExecutionData"`
	Destinations         []logDestination `json:"destinations,omitempty"`
}

type logDestination struct {
	CloudWatchLogsLogGroup struct {
		LogGroupArn string `json:"logGroupArn"`
	} `json:"cloudWatchLogsLogGroup"`
}

type tracingConfiguration struct {
	Enabled bool `json:"enabled"`
}

// logging is the state machine's logging as the DeployerStack configures
// it (infra/stacks): tuning.StateMachineLogLevel, with execution data as
// tuning.StateMachineLogExecutionData says, to the log group
// naming.StateMachineLogGroupName of the region's account and region.
func (r *Region) logging() loggingConfiguration {
	var dest logDestination
	dest.CloudWatchLogsLogGroup.LogGroupArn = naming.LogGroupARN(r.info.Account, r.info.Region, naming.StateMachineLogGroupName)
	return loggingConfiguration{
		Level:                tuning.StateMachineLogLevel,
		IncludeExecutionData: tuning.StateMachineLogExecutionData,
		Destinations:         []logDestination{dest},
	}
}

func (r *Region) apiDescribeStateMachine(in describeStateMachineInput) (any, *APIError) {
	if e := r.checkStateMachine(in.StateMachineArn); e != nil {
		return nil, e
	}
	withData, e := checkIncludedData(in.IncludedData)
	if e != nil {
		return nil, e
	}
	def := string(r.def)
	if !withData {
		// "If called with includedData = METADATA_ONLY, the returned
		// definition will be {}" (the API reference).
		def = "{}"
	}
	return struct {
		StateMachineArn      string               `json:"stateMachineArn"`
		Name                 string               `json:"name"`
		Status               string               `json:"status"`
		Definition           string               `json:"definition"`
		RoleArn              string               `json:"roleArn"`
		Type                 string               `json:"type"`
		CreationDate         *epoch               `json:"creationDate"`
		LoggingConfiguration loggingConfiguration `json:"loggingConfiguration"`
		TracingConfiguration tracingConfiguration `json:"tracingConfiguration"`
	}{
		StateMachineArn: r.info.StateMachineARN, Name: naming.StateMachineName, Status: "ACTIVE",
		Definition: def, RoleArn: r.roleARN(),
		Type: stateMachineType, CreationDate: epochOf(r.created),
		LoggingConfiguration: r.logging(),
		TracingConfiguration: tracingConfiguration{Enabled: tuning.StateMachineTracing},
	}, nil
}

type sendTaskSuccessInput struct {
	TaskToken string `json:"taskToken"`
	Output    string `json:"output"`
}

func (r *Region) apiSendTaskSuccess(in sendTaskSuccessInput) (any, *APIError) {
	if err := r.SendTaskSuccess(in.TaskToken, json.RawMessage(in.Output)); err != nil {
		return nil, asAPIError(err)
	}
	return struct{}{}, nil
}

type sendTaskFailureInput struct {
	TaskToken string `json:"taskToken"`
	Error     string `json:"error"`
	Cause     string `json:"cause"`
}

func (r *Region) apiSendTaskFailure(in sendTaskFailureInput) (any, *APIError) {
	if err := r.SendTaskFailure(in.TaskToken, in.Error, in.Cause); err != nil {
		return nil, asAPIError(err)
	}
	return struct{}{}, nil
}
