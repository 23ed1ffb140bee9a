package release

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
)

const minimalFile = `{"project_name":"coinbase/deploy-test","config_name":"development","subnets":["a"],"ami":"ubuntu","services":{"web":{"instance_type":"t2.nano","security_groups":["sg-web"]}}}`

func TestDecodeFile(t *testing.T) {
	cases := []struct {
		name string
		data string
		want []string // nil: decodes
	}{
		{"minimal", minimalFile, nil},
		{"unknown field names its path", strings.Replace(minimalFile, `"instance_type"`, `"autoscalng":{},"instance_type"`, 1),
			[]string{"services.web.autoscalng: unknown field (did you mean autoscaling?)"}},
		{"unknown field without a near miss", strings.Replace(minimalFile, `"ami"`, `"colour":1,"ami"`, 1),
			[]string{"colour: unknown field"}},
		{"field names are case sensitive", strings.Replace(minimalFile, `"ami"`, `"AMI"`, 1),
			[]string{"AMI: unknown field (did you mean ami?)"}},
		{"odd keys are quoted", strings.Replace(minimalFile, `"web"`, `"we\nb"`, 1)[:0] + `{"x.y\u0007":1}`,
			[]string{`["x.y\a"]: unknown field`}},
		{"duplicate key", `{"ami":"a","ami":"b"}`, []string{"ami: duplicate key"}},
		{"duplicate map key", `{"services":{"web":{},"web":{}}}`, []string{"services.web: duplicate key"}},
		{"release_id is the client's", strings.Replace(minimalFile, `{`, `{"release_id":"r1",`, 1),
			[]string{"release_id: set by the client; a release file must not set it"}},
		{"created_at is the client's", strings.Replace(minimalFile, `{`, `{"created_at":"2024-01-01T00:00:00Z",`, 1),
			[]string{"created_at: set by the client; a release file must not set it"}},
		{"created_by is the client's", strings.Replace(minimalFile, `{`, `{"created_by":"me",`, 1),
			[]string{"created_by: set by the client; a release file must not set it"}},
		{"asset hash and size are the client's", strings.Replace(minimalFile, `{`, `{"assets":{"a":{"path":"a","sha256":"x","size":1}},`, 1),
			[]string{"assets.a.sha256: set by the client; a release file must not set it", "assets.a.size: set by the client; a release file must not set it"}},
		{"string for integer", `{"timeout":"600"}`, []string{"timeout: must be an integer, not a string"}},
		{"fraction for integer", `{"timeout":1.5}`, []string{"timeout: must be an integer, not 1.5"}},
		{"exponent for integer", `{"timeout":1e3}`, []string{"timeout: must be an integer, not 1e3"}},
		{"huge integer", `{"timeout":99999999999999999999}`, []string{"timeout: integer out of range"}},
		{"huge number", `{"services":{"w":{"autoscaling":{"spread":1e999}}}}`, []string{"services.w.autoscaling.spread: number out of range"}},
		{"object for string", `{"ami":{}}`, []string{"ami: must be a string, not an object"}},
		{"array for object", `{"services":[]}`, []string{"services: must be an object, not an array"}},
		{"boolean for array", `{"subnets":true}`, []string{"subnets: must be an array, not a boolean"}},
		{"wrong element type", `{"subnets":["a",1]}`, []string{"subnets[1]: must be a string, not a number"}},
		{"null scalar", `{"ami":null}`, []string{"ami: must be a string, not null"}},
		{"null list and map are absent", `{"subnets":null,"lifecycle":null,"services":{"w":{"autoscaling":null,"tags":null}}}`, nil},
		{"null service", `{"services":{"w":null}}`, []string{"services.w: must be an object, not null"}},
		{"rollout steps: numbers and percentages", `{"services":{"w":{"rollout":{"steps":[1,"25%","100%"],"step_wait_seconds":60}}}}`, nil},
		{"rollout step of another type", `{"services":{"w":{"rollout":{"steps":[true,{},null]}}}}`, []string{
			`services.w.rollout.steps[0]: must be a number of instances (like 1) or a percentage of the group (like "25%"), not a boolean`,
			`services.w.rollout.steps[1]: must be a number of instances (like 1) or a percentage of the group (like "25%"), not an object`,
			`services.w.rollout.steps[2]: must be a number of instances (like 1) or a percentage of the group (like "25%"), not null`}},
		{"rollout step neither count nor percentage", `{"services":{"w":{"rollout":{"steps":[1.5,"half","25 %","12345%","050%"]}}}}`, []string{
			`services.w.rollout.steps[0]: must be a number of instances (like 1) or a percentage of the group (like "25%"), not 1.5`,
			`services.w.rollout.steps[1]: must be a number of instances (like 1) or a percentage of the group (like "25%"), not "half"`,
			`services.w.rollout.steps[2]: must be a number of instances (like 1) or a percentage of the group (like "25%"), not "25 %"`,
			`services.w.rollout.steps[3]: must be a number of instances (like 1) or a percentage of the group (like "25%"), not "12345%"`,
			`services.w.rollout.steps[4]: must be a number of instances (like 1) or a percentage of the group (like "25%"), not "050%"`}},
		{"not an object", `[]`, []string{"release: must be an object, not an array"}},
		{"bad created_at", `{"created_at":"yesterday"}`, []string{"created_at: set by the client; a release file must not set it"}},
		{"syntax error has line and column", "{\n  \"ami\": \"a\",\n  }", []string{"line 3, column 3: invalid character '}' looking for beginning of object key string"}},
		{"column counts characters", "{\"ami\": \"\u00e9\u00e9\" x}", []string{"line 1, column 14: invalid character 'x' after object key:value pair"}},
		{"truncated", `{"ami":"a"`, []string{"line 1, column 11: unexpected end of JSON input"}},
		{"empty", ``, []string{"line 1, column 1: unexpected end of JSON input"}},
		{"trailing data", "{}\n  {}", []string{"line 2, column 3: unexpected data after the release"}},
		{"invalid UTF-8", "{\"ami\":\"a\xffb\"}", []string{"line 1, column 10: invalid UTF-8"}},
		{"byte order mark", "\xef\xbb\xbf{}", []string{"line 1, column 1: starts with a byte order mark; save the file as UTF-8 without one"}},
		{"too deep in a known field", `{"services":{"w":{"tags":{"a":{"b":1}}}}}`, []string{"services.w.tags.a: must be a string, not an object"}},
		{"too deep in an unknown field", `{"x":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`,
			[]string{"x: nested too deeply (at most 16 levels)"}},
		{"every problem at once", `{"ami":1,"subnets":"a","x":1}`, []string{"ami: must be a string, not a number", "subnets: must be an array, not a string", "x: unknown field"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := DecodeFile([]byte(tc.data))
			if tc.want == nil {
				require.NoError(t, err)
				assert.NotNil(t, r)
				return
			}
			assert.Nil(t, r)
			assert.Equal(t, tc.want, problemsOf(t, err))
		})
	}
}

// TestRolloutStepsRoundTrip: a step reads as the release wrote it and
// writes back the same, so a release's hash does not depend on who
// encoded it.
func TestRolloutStepsRoundTrip(t *testing.T) {
	file := strings.Replace(minimalFile, `"instance_type"`, `"rollout":{"steps":[1,"25%","100%"],"step_wait_seconds":60},"instance_type"`, 1)
	r, err := DecodeFile([]byte(file))
	require.NoError(t, err)
	ro := r.ServiceRollout("web")
	require.NotNil(t, ro)
	assert.Equal(t, []Step{{N: 1}, {N: 25, Percent: true}, {N: 100, Percent: true}}, ro.Steps)
	assert.True(t, ro.Steps[2].Whole())
	assert.Equal(t, "25%", ro.Steps[1].String())
	raw, err := json.Marshal(ro)
	require.NoError(t, err)
	assert.JSONEq(t, `{"steps":[1,"25%","100%"],"step_wait_seconds":60}`, string(raw))
	var bad Step
	assert.ErrorContains(t, json.Unmarshal([]byte(`"x"`), &bad), `not "x"`)
	assert.Nil(t, valid().ServiceRollout("web"), "no rollout: all at once")
}

func TestDecodeFileTooLarge(t *testing.T) {
	data := []byte(`{"user_data":"` + strings.Repeat("x", limits.MaxReleaseBytes) + `"}`)
	_, err := DecodeFile(data)
	assert.Equal(t, []string{fmt.Sprintf("release: %d bytes, more than the limit of %d", len(data), limits.MaxReleaseBytes)}, problemsOf(t, err))
}

func TestDecodeAllowsClientFields(t *testing.T) {
	data := strings.Replace(minimalFile, `{`, `{"release_id":"r1","created_at":"2024-05-06T07:08:09Z","created_by":"arn:aws:iam::123456789012:user/alice","assets":{"a":{"sha256":"`+strings.Repeat("ab", 32)+`","size":7}},`, 1)
	r, err := Decode([]byte(data))
	require.NoError(t, err)
	assert.Equal(t, "r1", r.ReleaseID)
	assert.Equal(t, time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC), r.CreatedAt.UTC())
	assert.Equal(t, "arn:aws:iam::123456789012:user/alice", r.CreatedBy)
	assert.Equal(t, int64(7), r.Assets["a"].Size)

	_, err = Decode([]byte(`{"created_at":"2024-05-06"}`))
	assert.Equal(t, []string{"created_at: must be a time in RFC 3339 format (e.g. 2006-01-02T15:04:05Z)"}, problemsOf(t, err))
	_, err = Decode([]byte(`{"autoscalng":1}`))
	assert.Equal(t, []string{"autoscalng: unknown field"}, problemsOf(t, err))
}

func TestDecodeFileFields(t *testing.T) {
	r, err := DecodeFile([]byte(`{
		"project_name": "coinbase/shop", "config_name": "prod", "account_id": "123456789012",
		"region": "us-east-1", "qualifier": "q1", "subnets": ["a", "b"], "ami": "ubuntu",
		"user_data": "x", "timeout": 30,
		"lifecycle": {"h": {"transition": "autoscaling:EC2_INSTANCE_LAUNCHING", "role": "r", "sns": "s", "heartbeat_timeout": 60}},
		"assets": {"app": {"path": "a/b"}},
		"services": {"web": {"instance_type": "t3.micro", "security_groups": ["sg"], "elbs": ["e"], "target_groups": ["tg"],
			"profile": "p", "ebs_volume_size": 8, "ebs_volume_type": "gp2", "ebs_device_name": "/dev/sdb",
			"autoscaling": {"min_size": 2, "max_size": 3, "spread": 0.5, "max_terms": 1,
				"policies": [{"type": "cpu_scale_up", "threshold": 70.5, "scaling_adjustment": 1, "evaluation_periods": 2, "period": 60, "cooldown": 120}]},
			"tags": {"Team": "t"}, "ami": "ami-1", "subnets": ["c"], "user_data": "y"}}
	}`))
	require.NoError(t, err)
	want := &Release{
		ProjectName: "coinbase/shop", ConfigName: "prod", AccountID: "123456789012", Region: "us-east-1", Qualifier: "q1",
		Subnets: []string{"a", "b"}, AMI: "ubuntu", UserData: "x", Timeout: 30,
		Lifecycle: map[string]*LifecycleHook{"h": {Transition: "autoscaling:EC2_INSTANCE_LAUNCHING", Role: "r", SNS: "s", HeartbeatTimeout: 60}},
		Assets:    map[string]*Asset{"app": {Path: "a/b"}},
		Services: map[string]*Service{"web": {
			InstanceType: "t3.micro", SecurityGroups: []string{"sg"}, ELBs: []string{"e"}, TargetGroups: []string{"tg"},
			Profile: "p", EBSVolumeSize: 8, EBSVolumeType: "gp2", EBSDeviceName: "/dev/sdb",
			Autoscaling: &Autoscaling{MinSize: 2, MaxSize: 3, Spread: 0.5, MaxTerms: 1, Policies: []Policy{
				{Type: "cpu_scale_up", Threshold: 70.5, ScalingAdjustment: 1, EvaluationPeriods: 2, Period: 60, Cooldown: 120}}},
			Tags: map[string]string{"Team": "t"}, AMI: "ami-1", Subnets: []string{"c"}, UserData: "y",
		}},
	}
	assert.Equal(t, want, r)
}

func TestParseProblem(t *testing.T) {
	cases := []struct {
		line string
		want Problem
	}{
		{"services.web.ami: required", Problem{Path: "services.web.ami", Message: "required"}},
		{`services.web.tags["a: b"]: tag key is reserved`, Problem{Path: `services.web.tags["a: b"]`, Message: "tag key is reserved"}},
		{`tags["q\": x"]: m: n`, Problem{Path: `tags["q\": x"]`, Message: "m: n"}},
		// A position is not a path: it has fields of its own.
		{"line 3, column 5: invalid character", Problem{Line: 3, Column: 5, Message: "invalid character"}},
		{"line 3, column 5x: odd", Problem{Path: "line 3, column 5x", Message: "odd"}},
		{"no path here", Problem{Message: "no path here"}},
	}
	for _, tc := range cases {
		t.Run(tc.line, func(t *testing.T) {
			assert.Equal(t, tc.want, ParseProblem(tc.line))
			assert.Equal(t, tc.line, ParseProblem(tc.line).String(), "a problem prints as its line")
		})
	}
}

// TestProblemPositionIsParsed: the position a malformed file's problem
// names comes back as its line and column.
func TestProblemPositionIsParsed(t *testing.T) {
	_, err := Decode([]byte("{\n  \"project_name\": ,\n}"))
	var bad *failure.BadReleaseError
	require.ErrorAs(t, err, &bad)
	require.Len(t, bad.Problems, 1)
	p := ParseProblem(bad.Problems[0])
	assert.Equal(t, Problem{Line: 2, Column: 19, Message: p.Message}, p)
	assert.NotEmpty(t, p.Message)
}
