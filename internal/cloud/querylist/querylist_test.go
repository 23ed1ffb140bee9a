package querylist

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// canned answers every request with one body.
type canned struct {
	status int
	body   []byte
}

func (c canned) Do(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: c.status, Header: http.Header{"Content-Type": {"text/xml"}},
		Body: io.NopCloser(bytes.NewReader(c.body)), ContentLength: int64(len(c.body)), Request: r}, nil
}

// both decodes body as an answer to call with the SDK alone (sdk) and
// with the package's option (fast).
func both[O any](status int, body []byte, call func(hc canned, fast bool) (*O, error)) (sdk, fast *O, sdkErr, fastErr error) {
	sdk, sdkErr = call(canned{status, body}, false)
	fast, fastErr = call(canned{status, body}, true)
	return sdk, fast, sdkErr, fastErr
}

// autoScaling and elbV2 are clients answered by hc, with the package's
// option when fast.
func autoScaling(hc autoscaling.HTTPClient, fast bool) *autoscaling.Client {
	o := autoscaling.Options{Region: "us-east-1", HTTPClient: hc, Credentials: aws.AnonymousCredentials{}, RetryMaxAttempts: 1}
	if fast {
		return autoscaling.New(o, AutoScaling)
	}
	return autoscaling.New(o)
}

func elbV2(hc canned, fast bool) *elbv2.Client {
	o := elbv2.Options{Region: "us-east-1", HTTPClient: hc, Credentials: aws.AnonymousCredentials{}, RetryMaxAttempts: 1}
	if fast {
		return elbv2.New(o, ELBv2)
	}
	return elbv2.New(o)
}

func groupsBoth(status int, body []byte) (sdk, fast *autoscaling.DescribeAutoScalingGroupsOutput, sdkErr, fastErr error) {
	return both(status, body, func(hc canned, fast bool) (*autoscaling.DescribeAutoScalingGroupsOutput, error) {
		return autoScaling(hc, fast).DescribeAutoScalingGroups(context.Background(), &autoscaling.DescribeAutoScalingGroupsInput{})
	})
}

func activitiesBoth(status int, body []byte) (sdk, fast *autoscaling.DescribeScalingActivitiesOutput, sdkErr, fastErr error) {
	return both(status, body, func(hc canned, fast bool) (*autoscaling.DescribeScalingActivitiesOutput, error) {
		return autoScaling(hc, fast).DescribeScalingActivities(context.Background(), &autoscaling.DescribeScalingActivitiesInput{})
	})
}

func targetsBoth(status int, body []byte) (sdk, fast *elbv2.DescribeTargetHealthOutput, sdkErr, fastErr error) {
	return both(status, body, func(hc canned, fast bool) (*elbv2.DescribeTargetHealthOutput, error) {
		return elbV2(hc, fast).DescribeTargetHealth(context.Background(), &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String("arn:tg")})
	})
}

// same fails unless two decodings agree: both failed, or neither and
// what decoded says of each (the answer's fields, its metadata aside)
// is equal.
func same[O any](t testing.TB, sdk, fast *O, sdkErr, fastErr error, decoded func(*O) []any) {
	t.Helper()
	require.Equal(t, sdkErr != nil, fastErr != nil, "errors differ: SDK %v, fast %v", sdkErr, fastErr)
	if sdkErr == nil {
		require.Equal(t, decoded(sdk), decoded(fast))
	}
}

func sameGroups(t testing.TB, body []byte, status int) {
	t.Helper()
	sdk, fast, sdkErr, fastErr := groupsBoth(status, body)
	same(t, sdk, fast, sdkErr, fastErr, func(o *autoscaling.DescribeAutoScalingGroupsOutput) []any {
		return []any{o.AutoScalingGroups, o.NextToken}
	})
}

func sameActivities(t testing.TB, body []byte, status int) {
	t.Helper()
	sdk, fast, sdkErr, fastErr := activitiesBoth(status, body)
	same(t, sdk, fast, sdkErr, fastErr, func(o *autoscaling.DescribeScalingActivitiesOutput) []any { return []any{o.Activities, o.NextToken} })
}

func sameTargets(t testing.TB, body []byte, status int) {
	t.Helper()
	sdk, fast, sdkErr, fastErr := targetsBoth(status, body)
	same(t, sdk, fast, sdkErr, fastErr, func(o *elbv2.DescribeTargetHealthOutput) []any { return []any{o.TargetHealthDescriptions} })
}

// encode writes v (a struct, or a pointer to one) as the query protocol
// writes a value: each set field an element of its name, a list's
// entries <member> elements.
func encode(b *strings.Builder, name string, v reflect.Value) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	fmt.Fprintf(b, "<%s>", name)
	switch {
	case v.Type() == reflect.TypeFor[time.Time]():
		b.WriteString(v.Interface().(time.Time).UTC().Format("2006-01-02T15:04:05.000Z"))
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				encode(b, f.Name, v.Field(i))
			}
		}
	case v.Kind() == reflect.Slice:
		for i := range v.Len() {
			encode(b, "member", v.Index(i))
		}
	case v.Kind() == reflect.String:
		b.WriteString(escape(v.String()))
	default:
		fmt.Fprint(b, v.Interface())
	}
	fmt.Fprintf(b, "</%s>", name)
}

// escape is s as AWS writes character data: &, < and > escaped, and in
// turn some characters as references.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;").Replace(s)
}

// fill sets every exported field of the struct v points to, and of the
// structs below it, to a random value.
func fill(rng *rand.Rand, v reflect.Value) {
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(time.UnixMilli(rng.Int64N(4e12)).UTC()))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(rng, v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(rng, v.Field(i))
			}
		}
	case reflect.String:
		v.SetString(randomText(rng))
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Int32:
		v.SetInt(int64(rng.IntN(65536)))
	default:
		panic("fill: no random " + v.Type().String())
	}
}

// randomText is a string of what a field may hold, XML's special
// characters and white space among them; sometimes empty.
func randomText(rng *rand.Rand) string {
	const alphabet = "abcXYZ019-_. /:&<>\"'\t\n"
	n := rng.IntN(12)
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// groupsAnswer is a DescribeAutoScalingGroups answer with groups of
// random instances, each of their fields set.
func groupsAnswer(rng *rand.Rand, groups, instances int) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?>` + "\n" + `<DescribeAutoScalingGroupsResponse xmlns="http://autoscaling.amazonaws.com/doc/2011-01-01/">` + "\n  <DescribeAutoScalingGroupsResult>\n    <AutoScalingGroups>\n")
	for g := range groups {
		fmt.Fprintf(&b, "      <member>\n        <AutoScalingGroupName>group-%d</AutoScalingGroupName>\n        <DesiredCapacity>%d</DesiredCapacity>\n", g, instances)
		if g%3 != 2 { // some groups with no Instances element
			encode(&b, "Instances", reflect.ValueOf(filled[asgtypes.Instance](rng, instances)))
		}
		if g%4 != 3 {
			encode(&b, "Tags", reflect.ValueOf(filled[asgtypes.TagDescription](rng, 1+g%5)))
		}
		b.WriteString("\n        <SuspendedProcesses><member><ProcessName>Launch</ProcessName></member></SuspendedProcesses>\n      </member>\n")
	}
	b.WriteString("    </AutoScalingGroups>\n    <NextToken>next</NextToken>\n  </DescribeAutoScalingGroupsResult>\n  <ResponseMetadata><RequestId>r</RequestId></ResponseMetadata>\n</DescribeAutoScalingGroupsResponse>\n")
	return []byte(b.String())
}

// filled are n values of T, each field set at random.
func filled[T any](rng *rand.Rand, n int) []T {
	list := make([]T, n)
	for i := range list {
		fill(rng, reflect.ValueOf(&list[i]).Elem())
	}
	return list
}

// activitiesAnswer is a DescribeScalingActivities answer of random
// activities, each of their fields set.
func activitiesAnswer(rng *rand.Rand, n int) []byte {
	var b strings.Builder
	b.WriteString(`<DescribeScalingActivitiesResponse xmlns="http://autoscaling.amazonaws.com/doc/2011-01-01/"><DescribeScalingActivitiesResult>`)
	encode(&b, "Activities", reflect.ValueOf(filled[asgtypes.Activity](rng, n)))
	b.WriteString(`<NextToken>t</NextToken></DescribeScalingActivitiesResult></DescribeScalingActivitiesResponse>`)
	return []byte(b.String())
}

// targetsAnswer is a DescribeTargetHealth answer of random targets, each
// of their fields set.
func targetsAnswer(rng *rand.Rand, targets int) []byte {
	var b strings.Builder
	b.WriteString(`<DescribeTargetHealthResponse xmlns="http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/"><DescribeTargetHealthResult>`)
	encode(&b, "TargetHealthDescriptions", reflect.ValueOf(filled[elbv2types.TargetHealthDescription](rng, targets)))
	b.WriteString(`</DescribeTargetHealthResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></DescribeTargetHealthResponse>`)
	return []byte(b.String())
}

// TestEveryFieldDecodes holds the fast path to the SDK's decoder on
// answers with every field of the SDK's types set: it must take them
// (cut) and decode them as the SDK does. A field the SDK gains on an
// upgrade and the lists here lack fails it.
func TestEveryFieldDecodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for seed := range 50 {
		body := groupsAnswer(rng, 1+seed%4, seed%7)
		_, _, owners, ok := groups.cut(body)
		require.True(t, ok, "the fast path stood aside from a canonical answer:\n%s", body)
		require.Equal(t, 1+seed%4, owners)
		sdk, fast, sdkErr, fastErr := groupsBoth(200, body)
		require.NoError(t, sdkErr)
		require.NoError(t, fastErr)
		require.Equal(t, sdk.AutoScalingGroups, fast.AutoScalingGroups)
		require.Equal(t, sdk.NextToken, fast.NextToken)

		body = targetsAnswer(rng, seed%9)
		_, _, _, ok = targetHealth.cut(body)
		require.True(t, ok, "the fast path stood aside from a canonical answer:\n%s", body)
		sameTargets(t, body, 200)

		body = activitiesAnswer(rng, seed%6)
		_, _, _, ok = activities.cut(body)
		require.True(t, ok, "the fast path stood aside from a canonical answer:\n%s", body)
		sameActivities(t, body, 200)
	}
	// Every field is set in what the SDK decoded, so none was left out.
	sdk, _, err, _ := groupsBoth(200, groupsAnswer(rand.New(rand.NewPCG(3, 4)), 1, 3))
	require.NoError(t, err)
	require.NotEmpty(t, sdk.AutoScalingGroups[0].Instances)
	for _, i := range sdk.AutoScalingGroups[0].Instances {
		assertAllSet(t, reflect.ValueOf(i), "Instance")
	}
	for _, tag := range sdk.AutoScalingGroups[0].Tags {
		assertAllSet(t, reflect.ValueOf(tag), "TagDescription")
	}
	_, fast, _, err := targetsBoth(200, targetsAnswer(rand.New(rand.NewPCG(3, 4)), 2))
	require.NoError(t, err)
	for _, d := range fast.TargetHealthDescriptions {
		assertAllSet(t, reflect.ValueOf(d), "TargetHealthDescription")
	}
	_, acts, _, err := activitiesBoth(200, activitiesAnswer(rand.New(rand.NewPCG(3, 4)), 2))
	require.NoError(t, err)
	for _, a := range acts.Activities {
		assertAllSet(t, reflect.ValueOf(a), "Activity")
	}
}

// assertAllSet fails for each exported pointer field below v that is nil.
func assertAllSet(t *testing.T, v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.Pointer:
		if assert.False(t, v.IsNil(), "%s is not set", path) {
			assertAllSet(t, v.Elem(), path)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				assertAllSet(t, v.Field(i), path+"."+f.Name)
			}
		}
	}
}

// TestAnswersDecodeAsTheSDKDecodes: answers in forms the fast path reads
// and in forms it leaves to the SDK decode the same either way, errors
// included.
func TestAnswersDecodeAsTheSDKDecodes(t *testing.T) {
	const head = `<DescribeAutoScalingGroupsResponse><DescribeAutoScalingGroupsResult><AutoScalingGroups>`
	const tail = `</AutoScalingGroups></DescribeAutoScalingGroupsResult></DescribeAutoScalingGroupsResponse>`
	instance := `<member><InstanceId>i-1</InstanceId><LifecycleState>InService</LifecycleState><ProtectedFromScaleIn>true</ProtectedFromScaleIn></member>`
	tests := []struct {
		name string
		body string
		fast bool // the fast path takes it
	}{
		{"canonical", head + `<member><AutoScalingGroupName>a</AutoScalingGroupName><Instances>` + instance + `</Instances></member>` + tail, true},
		{"no instances element", head + `<member><AutoScalingGroupName>a</AutoScalingGroupName></member>` + tail, true},
		{"empty instances", head + `<member><Instances></Instances></member><member><Instances/></member>` + tail, true},
		{"two instances elements", head + `<member><Instances>` + instance + `</Instances><Instances>` + instance + `</Instances></member>` + tail, true},
		{"two group lists", head + `<member><Instances>` + instance + `</Instances></member></AutoScalingGroups><AutoScalingGroups><member/><member><Instances>` + instance + `</Instances></member>` + tail, true},
		{"names in another case", `<x><describeautoscalinggroupsresult><autoscalinggroups><MEMBER><instances><Member><instanceid>i-2</instanceid><launchtemplate><VERSION>3</VERSION></launchtemplate></Member></instances></MEMBER></autoscalinggroups></describeautoscalinggroupsresult></x>`, true},
		{"empty values", head + `<member><Instances><member><InstanceId/><HealthStatus></HealthStatus><LaunchTemplate/></member></Instances></member>` + tail, true},
		{"entities", head + `<member><Instances><member><InstanceId>&lt;i&amp;&#65;&#x42;&quot;&apos;&gt;</InstanceId></member></Instances></member>` + tail, true},
		{"launch template twice", head + `<member><Instances><member><LaunchTemplate><Version>1</Version></LaunchTemplate><LaunchTemplate><LaunchTemplateId>lt</LaunchTemplateId></LaunchTemplate></member></Instances></member>` + tail, true},
		{"unknown fields skipped", head + `<member><Instances><Other>x</Other><member><Future><A>1</A></Future><InstanceId>i</InstanceId></member></Instances></member>` + tail, true},
		{"white space around values", head + "<member>\n<Instances>\n\t<member>\n<InstanceId> i-1\n</InstanceId>\n</member>\n</Instances>\n</member>" + tail, true},
		{"text between members", head + `<member><Instances>stray` + instance + `text</Instances></member>` + tail, true},
		{"results after the first", head + `<member><Instances>` + instance + `</Instances></member></AutoScalingGroups></DescribeAutoScalingGroupsResult><DescribeAutoScalingGroupsResult><AutoScalingGroups><member/></AutoScalingGroups></DescribeAutoScalingGroupsResult></DescribeAutoScalingGroupsResponse>`, true},
		{"elements before the result", `<r><ResponseMetadata><RequestId>x</RequestId></ResponseMetadata><DescribeAutoScalingGroupsResult><AutoScalingGroups><member><Instances>` + instance + `</Instances></member></AutoScalingGroups></DescribeAutoScalingGroupsResult></r>`, true},
		{"attributes outside the list", `<r a="1" b='>'><DescribeAutoScalingGroupsResult><AutoScalingGroups><member x="y"><Instances>` + instance + `</Instances></member></AutoScalingGroups></DescribeAutoScalingGroupsResult></r>`, true},

		{"comment inside", head + `<member><Instances><!-- c -->` + instance + `</Instances></member>` + tail, false},
		{"CDATA value", head + `<member><Instances><member><InstanceId><![CDATA[i-1]]></InstanceId></member></Instances></member>` + tail, false},
		{"attribute inside", head + `<member><Instances><member a="1"><InstanceId>i</InstanceId></member></Instances></member>` + tail, false},
		{"namespace prefix", head + `<member><Instances><member><a:InstanceId>i</a:InstanceId></member></Instances></member>` + tail, false},
		{"carriage return", head + "<member><Instances><member><InstanceId>i\r\n</InstanceId></member></Instances></member>" + tail, false},
		{"non-ASCII value", head + `<member><Instances><member><InstanceId>é</InstanceId></member></Instances></member>` + tail, false},
		{"boolean spelled otherwise", head + `<member><Instances><member><ProtectedFromScaleIn>1</ProtectedFromScaleIn></member></Instances></member>` + tail, false},
		{"boolean invalid", head + `<member><Instances><member><ProtectedFromScaleIn>yes</ProtectedFromScaleIn></member></Instances></member>` + tail, false},
		{"element in a value", head + `<member><Instances><member><InstanceId>a<b/>c</InstanceId></member></Instances></member>` + tail, false},
		{"unknown entity", head + `<member><Instances><member><InstanceId>&nbsp;</InstanceId></member></Instances></member>` + tail, false},
		{"mismatched end tag", head + `<member><Instances><member><InstanceId>i</HealthStatus></member></Instances></member>` + tail, false},
		{"truncated", head + `<member><Instances><member><InstanceId>i`, false},
		{"no result", `<r><Other/></r>`, false},
		{"empty", ``, false},
		{"other encoding", `<?xml version="1.0" encoding="ISO-8859-1"?>` + head + tail, false},
		{"processing instruction", `<?other?>` + head + tail, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, ok := groups.cut([]byte(tt.body))
			assert.Equal(t, tt.fast, ok, "whether the fast path takes it")
			sameGroups(t, []byte(tt.body), 200)
			if _, fast, _, err := groupsBoth(200, []byte(tt.body)); err == nil {
				assert.Equal(t, tt.fast, Decoded(fast.ResultMetadata), "whether the answer says the fast path decoded it")
			}
		})
	}
	t.Run("error status", func(t *testing.T) {
		body := `<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message></Error><RequestId>r</RequestId></ErrorResponse>`
		sdk, fast, sdkErr, fastErr := groupsBoth(400, []byte(body))
		require.Error(t, sdkErr)
		require.Error(t, fastErr)
		assert.Nil(t, sdk)
		assert.Nil(t, fast)
		assert.Contains(t, fastErr.Error(), "Throttling")
	})
}

// TestListAnswersDecodeAsTheSDKDecodes is the same for
// DescribeTargetHealth and DescribeScalingActivities, whose ports,
// timestamps and progress the SDK parses.
func TestListAnswersDecodeAsTheSDKDecodes(t *testing.T) {
	targets := func(list string) string {
		return `<DescribeTargetHealthResponse><DescribeTargetHealthResult>` + list + `</DescribeTargetHealthResult></DescribeTargetHealthResponse>`
	}
	port := func(p string) string {
		return targets(`<TargetHealthDescriptions><member><Target>` + p + `</Target></member></TargetHealthDescriptions>`)
	}
	acts := func(member string) string {
		return `<DescribeScalingActivitiesResponse><DescribeScalingActivitiesResult><Activities><member>` + member +
			`</member></Activities></DescribeScalingActivitiesResult></DescribeScalingActivitiesResponse>`
	}
	target := `<member><Target><Id>i-1</Id><Port>80</Port></Target><TargetHealth><State>healthy</State></TargetHealth></member>`
	tests := []struct {
		name   string
		answer answer
		same   func(testing.TB, []byte, int)
		body   string
		fast   bool
	}{
		{"targets", targetHealth, sameTargets, targets(`<TargetHealthDescriptions>` + target + target + `</TargetHealthDescriptions>`), true},
		{"no targets list", targetHealth, sameTargets, targets(``), true},
		{"empty targets list", targetHealth, sameTargets, targets(`<TargetHealthDescriptions/>`), true},
		{"two targets lists", targetHealth, sameTargets, targets(`<TargetHealthDescriptions>` + target + `</TargetHealthDescriptions><TargetHealthDescriptions>` + target + `</TargetHealthDescriptions>`), true},
		{"port with a sign", targetHealth, sameTargets, port(`<Port>+80</Port>`), false},
		{"port too large", targetHealth, sameTargets, port(`<Port>99999999999</Port>`), false},
		{"port not a number", targetHealth, sameTargets, port(`<Port>x</Port>`), false},
		{"empty port", targetHealth, sameTargets, port(`<Port/>`), false},
		{"activity", activities, sameActivities, acts(`<ActivityId>a</ActivityId><StartTime>2026-11-27T10:00:00.123Z</StartTime><EndTime>2026-11-27T10:01:00Z</EndTime><Progress>100</Progress><StatusCode>Successful</StatusCode>`), true},
		{"time not a time", activities, sameActivities, acts(`<StartTime>yesterday</StartTime>`), false},
		{"progress negative", activities, sameActivities, acts(`<Progress>-1</Progress>`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, ok := tt.answer.cut([]byte(tt.body))
			assert.Equal(t, tt.fast, ok, "whether the fast path takes it")
			tt.same(t, []byte(tt.body), 200)
		})
	}
}

// TestOtherOperationsUntouched: the option changes no other operation's
// stack.
func TestOtherOperationsUntouched(t *testing.T) {
	body := `<DescribeTagsResponse><DescribeTagsResult><Tags><member><Key>k</Key><PropagateAtLaunch>true</PropagateAtLaunch></member></Tags></DescribeTagsResult></DescribeTagsResponse>`
	out, err := autoScaling(canned{200, []byte(body)}, true).DescribeTags(context.Background(), &autoscaling.DescribeTagsInput{})
	require.NoError(t, err)
	require.Len(t, out.Tags, 1)
	assert.Equal(t, "k", aws.ToString(out.Tags[0].Key))
}

// failingBody answers with the first half of body, then fails its read
// with err: a connection cut mid-answer.
type failingBody struct {
	body []byte
	err  error
}

func (f failingBody) Do(r *http.Request) (*http.Response, error) {
	half := io.MultiReader(bytes.NewReader(f.body[:len(f.body)/2]), failing{f.err})
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/xml"}},
		Body: io.NopCloser(half), ContentLength: int64(len(f.body)), Request: r}, nil
}

// TestReadErrorDecodesAsTheSDKDecodes: an answer whose body fails to
// read part-way fails with the read's own error, as with the SDK alone,
// not with the XML error of the part read.
func TestReadErrorDecodesAsTheSDKDecodes(t *testing.T) {
	cut := errors.New("connection reset by peer")
	hc := failingBody{groupsAnswer(rand.New(rand.NewPCG(3, 4)), 2, 3), cut}
	in := &autoscaling.DescribeAutoScalingGroupsInput{}
	_, sdkErr := autoScaling(hc, false).DescribeAutoScalingGroups(context.Background(), in)
	_, fastErr := autoScaling(hc, true).DescribeAutoScalingGroups(context.Background(), in)
	require.ErrorIs(t, sdkErr, cut)
	require.ErrorIs(t, fastErr, cut, "the read's failure reaches the caller")
	assert.Equal(t, sdkErr.Error(), fastErr.Error())
}

// TestOwnersMiscountedDecodeAsTheSDKDecodes: when the SDK decodes the
// rest of an answer with another number of owners than the cut counted
// (a walk that lost its place), the lists are grafted onto none of them:
// the SDK decodes the answer whole. A cut that miscounts by one stands in
// for the mistake.
func TestOwnersMiscountedDecodeAsTheSDKDecodes(t *testing.T) {
	miscounted := groups
	miscounted.count = func(result any) (int, bool) {
		n, ok := groups.count(result)
		return n + 1, ok
	}
	body := groupsAnswer(rand.New(rand.NewPCG(5, 6)), 3, 4)
	in := &autoscaling.DescribeAutoScalingGroupsInput{}
	sdk, err := autoScaling(canned{200, body}, false).DescribeAutoScalingGroups(context.Background(), in)
	require.NoError(t, err)
	exact, err := autoScaling(canned{200, body}, true).DescribeAutoScalingGroups(context.Background(), in)
	require.NoError(t, err)
	require.True(t, Decoded(exact.ResultMetadata), "counted alike, the fast path takes the answer")
	out, err := autoScaling(canned{200, body}, false).DescribeAutoScalingGroups(context.Background(), in, func(o *autoscaling.Options) {
		o.APIOptions = append(o.APIOptions, swap("DescribeAutoScalingGroups", miscounted))
	})
	require.NoError(t, err)
	assert.False(t, Decoded(out.ResultMetadata), "miscounted, the SDK decodes it whole")
	assert.Equal(t, sdk.AutoScalingGroups, out.AutoScalingGroups)
}

// TestMutatedAnswersDecodeAsTheSDKDecodes runs what the fuzz tests run
// on answers mutated at random (bytes changed, cut out, repeated), the
// same each run: whatever the fast path takes or leaves, the decoding
// is the SDK's.
func TestMutatedAnswersDecodeAsTheSDKDecodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	cases := []struct {
		name string
		body []byte
		same func(testing.TB, []byte, int)
	}{
		{"DescribeAutoScalingGroups", groupsAnswer(rng, 2, 2), sameGroups},
		{"DescribeTargetHealth", targetsAnswer(rng, 3), sameTargets},
		{"DescribeScalingActivities", activitiesAnswer(rng, 2), sameActivities},
	}
	const special = "<>/&;#x=\"' \t\n\rmM"
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for range 600 {
				b := append([]byte(nil), c.body...)
				for range 1 + rng.IntN(3) {
					i, j := rng.IntN(len(b)), rng.IntN(len(b))
					switch rng.IntN(4) {
					case 0:
						b[i] = special[rng.IntN(len(special))]
					case 1:
						b[i] = byte(rng.IntN(256))
					case 2:
						b = append(b[:min(i, j)], b[max(i, j):]...)
					default:
						b = append(b[:i], append(append([]byte(nil), b[min(i, j):max(i, j)]...), b[i:]...)...)
					}
					if len(b) == 0 {
						b = append(b, '<')
					}
				}
				c.same(t, b, 200)
			}
		})
	}
}

func FuzzDescribeAutoScalingGroups(f *testing.F) {
	rng := rand.New(rand.NewPCG(5, 6))
	f.Add(groupsAnswer(rng, 2, 2))
	f.Add([]byte(`<r><DescribeAutoScalingGroupsResult><AutoScalingGroups><member><Instances><member><InstanceId>&#65;</InstanceId><ProtectedFromScaleIn>false</ProtectedFromScaleIn><LaunchTemplate><Version>1</Version></LaunchTemplate></member></Instances></member></AutoScalingGroups></DescribeAutoScalingGroupsResult></r>`))
	f.Add([]byte(`<r><DescribeAutoScalingGroupsResult><AutoScalingGroups><member/><MEMBER><instances/></MEMBER></AutoScalingGroups></DescribeAutoScalingGroupsResult></r>`))
	f.Fuzz(func(t *testing.T, body []byte) { sameGroups(t, body, 200) })
}

func FuzzDescribeScalingActivities(f *testing.F) {
	rng := rand.New(rand.NewPCG(11, 12))
	f.Add(activitiesAnswer(rng, 3))
	f.Fuzz(func(t *testing.T, body []byte) { sameActivities(t, body, 200) })
}

func FuzzDescribeTargetHealth(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 8))
	f.Add(targetsAnswer(rng, 3))
	f.Add([]byte(`<r><DescribeTargetHealthResult><TargetHealthDescriptions><member><Target><Port>0080</Port></Target></member></TargetHealthDescriptions></DescribeTargetHealthResult></r>`))
	f.Fuzz(func(t *testing.T, body []byte) { sameTargets(t, body, 200) })
}

// BenchmarkDescribeAutoScalingGroups decodes one page of 50 groups of 100
// instances (the page ferry reads at S=50,N=100) with the SDK alone and
// with the fast path.
func BenchmarkDescribeAutoScalingGroups(b *testing.B) {
	body := groupsAnswer(rand.New(rand.NewPCG(9, 10)), 50, 100)
	for _, tt := range []struct {
		name string
		fast bool
	}{{"sdk", false}, {"fast", true}} {
		b.Run(tt.name, func(b *testing.B) {
			c := autoScaling(canned{200, body}, tt.fast)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.DescribeAutoScalingGroups(context.Background(), &autoscaling.DescribeAutoScalingGroupsInput{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
