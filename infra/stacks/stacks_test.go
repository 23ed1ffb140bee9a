package stacks

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/infra/bootstrap"
	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/tuning"
	"github.com/ferryhq/ferry/statemachine"
	"github.com/ferryhq/ferry/statemachine/definition"
)

var update = flag.Bool("update", false, "rewrite infra/bootstrap/template.json from the stack")

type obj = map[string]interface{}

// lambdaDir is a directory holding a stand-in bootstrap executable.
func lambdaDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bootstrap"), []byte("#!/bin/sh\n"), 0o755))
	return dir
}

// deployerTemplate synthesizes the DeployerStack once per test binary.
var deployerCache struct {
	stack *Deployer
	tmpl  assertions.Template
}

func deployer(t *testing.T) (*Deployer, assertions.Template, obj) {
	t.Helper()
	if deployerCache.stack == nil {
		d, err := NewDeployerStack(NewApp(), naming.DeployerStackName, &DeployerProps{LambdaDir: lambdaDir(t)})
		require.NoError(t, err)
		deployerCache.stack, deployerCache.tmpl = d, assertions.Template_FromStack(d.Stack, nil)
	}
	return deployerCache.stack, deployerCache.tmpl, *deployerCache.tmpl.ToJSON()
}

func resourcesOfType(tmpl obj, typ string) map[string]obj {
	out := map[string]obj{}
	for id, r := range tmpl["Resources"].(obj) {
		if r.(obj)["Type"] == typ {
			out[id] = r.(obj)
		}
	}
	return out
}

func strs(v interface{}) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []interface{}:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func mustJSON(t *testing.T, v interface{}) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestDeployerStackRequiresTheLambda(t *testing.T) {
	_, err := NewDeployerStack(NewApp(), "x", &DeployerProps{LambdaDir: t.TempDir()})
	assert.ErrorContains(t, err, "make build")
	_, err = NewDeployerStack(NewApp(), "x", &DeployerProps{})
	assert.ErrorContains(t, err, "LambdaDir is required")
}

func TestDeployerBucket(t *testing.T) {
	_, tmpl, _ := deployer(t)
	tmpl.ResourceCountIs(jsii.String("AWS::S3::Bucket"), jsii.Number(1))
	tmpl.HasResource(jsii.String("AWS::S3::Bucket"), obj{"DeletionPolicy": "Retain"})
	tmpl.HasResourceProperties(jsii.String("AWS::S3::Bucket"), obj{
		"BucketName": obj{"Fn::Join": []interface{}{"", []interface{}{
			"ferry-deployer-", obj{"Ref": "AWS::AccountId"}, "-", obj{"Ref": "AWS::Region"}}}},
		"BucketEncryption": obj{"ServerSideEncryptionConfiguration": []interface{}{
			obj{"ServerSideEncryptionByDefault": obj{"SSEAlgorithm": "AES256"}}}},
		"VersioningConfiguration": obj{"Status": "Enabled"},
		"PublicAccessBlockConfiguration": obj{
			"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true},
		"LifecycleConfiguration": obj{"Rules": assertions.Match_ArrayWith(&[]interface{}{
			assertions.Match_ObjectLike(&obj{
				"Status":           "Enabled",
				"TagFilters":       []interface{}{obj{"Key": naming.ObjectTagExpire, "Value": naming.ObjectTagExpireRelease}},
				"ExpirationInDays": 365,
			}),
			assertions.Match_ObjectLike(&obj{
				"Status": "Enabled", "Prefix": naming.StartsRoot,
				"ExpirationInDays": 1, "NoncurrentVersionExpiration": obj{"NoncurrentDays": 1},
			}),
			assertions.Match_ObjectLike(&obj{
				"Status": "Enabled", "Prefix": naming.TurnsRoot,
				"ExpirationInDays": 1, "NoncurrentVersionExpiration": obj{"NoncurrentDays": 1},
			}),
			assertions.Match_ObjectLike(&obj{
				"Status":                      "Enabled",
				"NoncurrentVersionExpiration": obj{"NoncurrentDays": 30},
			}),
		})},
	})
	// TLS only.
	tmpl.HasResourceProperties(jsii.String("AWS::S3::BucketPolicy"), obj{
		"PolicyDocument": obj{"Statement": assertions.Match_ArrayWith(&[]interface{}{assertions.Match_ObjectLike(&obj{
			"Effect":    "Deny",
			"Action":    "s3:*",
			"Condition": obj{"Bool": obj{"aws:SecureTransport": "false"}},
		})})},
	})
}

func TestDeployerFunction(t *testing.T) {
	_, tmpl, raw := deployer(t)
	bucketID := onlyID(t, raw, "AWS::S3::Bucket")
	tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Function"), obj{
		"FunctionName":  naming.DeployerFunctionName,
		"Runtime":       "provided.al2023",
		"Architectures": []interface{}{"arm64"},
		"Handler":       "bootstrap",
		"Environment": obj{"Variables": obj{
			naming.EnvDeployerBucket: obj{"Ref": bucketID},
			naming.EnvAccountID:      obj{"Ref": "AWS::AccountId"},
			naming.EnvRegion:         obj{"Ref": "AWS::Region"},
		}},
	})
}

func onlyID(t *testing.T, tmpl obj, typ string) string {
	t.Helper()
	rs := resourcesOfType(tmpl, typ)
	require.Len(t, rs, 1, typ)
	for id := range rs {
		return id
	}
	return ""
}

// The Lambda's role has its conventional name; it may use exactly the S3
// actions its stores call, on its own bucket only, with explicit denies
// elsewhere and on erasing history; may assume only ferry's deploy and
// publish roles of its target accounts; and may describe only executions
// of its own state machine.
func TestDeployerLambdaPolicy(t *testing.T) {
	d, _, raw := deployer(t)
	bucketID := onlyID(t, raw, "AWS::S3::Bucket")
	bucketArn := obj{"Fn::GetAtt": []interface{}{bucketID, "Arn"}}
	bucketObjects := obj{"Fn::Join": []interface{}{"", []interface{}{bucketArn, "/*"}}}
	ownBucket := mustJSON(t, []interface{}{bucketArn, bucketObjects})

	roleID := *d.Stack.GetLogicalId(d.Function.Role().Node().DefaultChild().(awscdk.CfnElement))
	roleProps := raw["Resources"].(obj)[roleID].(obj)["Properties"].(obj)
	assert.Equal(t, obj{"Fn::Join": []interface{}{"", []interface{}{"ferry-deployer-", obj{"Ref": "AWS::Region"}}}}, roleProps["RoleName"])
	var fnStatements []obj
	for _, p := range resourcesOfType(raw, "AWS::IAM::Policy") {
		props := p["Properties"].(obj)
		if mustJSON(t, props["Roles"]) != mustJSON(t, []interface{}{obj{"Ref": roleID}}) {
			continue
		}
		for _, s := range props["PolicyDocument"].(obj)["Statement"].([]interface{}) {
			fnStatements = append(fnStatements, s.(obj))
		}
	}
	require.NotEmpty(t, fnStatements)

	bySid := map[string]obj{}
	for _, s := range fnStatements {
		sid, _ := s["Sid"].(string)
		bySid[sid] = s
		if s["Effect"] == "Allow" {
			for _, a := range strs(s["Action"]) {
				assert.NotContains(t, a, "*", "%s: no wildcard action", sid)
			}
		}
	}
	assert.ElementsMatch(t, []string{"DeployerBucketObjects", "DeployerBucketList", "DenyOtherBuckets", "NeverEraseHistory",
		"AssumeFerryDeployRoles", "AssumeFerryPublishRoles", "DescribeOwnExecutions", "StartOwnExecutions"}, keys(bySid))
	assert.Equal(t, []string{"s3:GetObject", "s3:PutObject", "s3:PutObjectTagging", "s3:DeleteObject"}, strs(bySid["DeployerBucketObjects"]["Action"]))
	assert.Equal(t, mustJSON(t, bucketObjects), mustJSON(t, bySid["DeployerBucketObjects"]["Resource"]))
	assert.Equal(t, "s3:ListBucket", bySid["DeployerBucketList"]["Action"])
	assert.Equal(t, "Deny", bySid["DenyOtherBuckets"]["Effect"])
	assert.Equal(t, "s3:*", bySid["DenyOtherBuckets"]["Action"])
	assert.Equal(t, ownBucket, mustJSON(t, bySid["DenyOtherBuckets"]["NotResource"]))
	assert.Equal(t, "Deny", bySid["NeverEraseHistory"]["Effect"])
	assert.Contains(t, strs(bySid["NeverEraseHistory"]["Action"]), "s3:DeleteObjectVersion")
	for _, kind := range []string{"deploy", "publish"} {
		s := bySid["AssumeFerry"+strings.ToUpper(kind[:1])+kind[1:]+"Roles"]
		assert.Equal(t, []string{"sts:AssumeRole", "sts:TagSession", "sts:SetSourceIdentity"}, strs(s["Action"]))
		j := mustJSON(t, s["Resource"])
		assert.Contains(t, j, `"Fn::If":["HasTargetAccounts"`, "the target accounts, or its own")
		assert.Contains(t, j, `{"Ref":"TargetAccounts"}`)
		assert.Contains(t, j, `:role/ferry-*`+kind+`-*-*`)
		assert.NotContains(t, j, `:iam::*:`, "never every account")
	}
	assert.Contains(t, mustJSON(t, bySid["DescribeOwnExecutions"]["Resource"]), `:execution:`+naming.StateMachineName+`:*"`)
	assert.Equal(t, "states:StartExecution", bySid["StartOwnExecutions"]["Action"], "a reconcile pass starts heals")
	assert.Contains(t, mustJSON(t, bySid["StartOwnExecutions"]["Resource"]), `:stateMachine:`+naming.StateMachineName+`"`)
}

func keys(m map[string]obj) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The deployer bucket's policy: nobody but the Lambda's role writes or
// deletes under the state prefix, and UnlockPrincipals may delete locks
// only. Only Step Functions, for this state machine, may invoke the
// function by its resource policy.
func TestDeployerBucketPolicyAndInvoke(t *testing.T) {
	d, tmpl, raw := deployer(t)
	roleID := *d.Stack.GetLogicalId(d.Function.Role().Node().DefaultChild().(awscdk.CfnElement))
	lambdaRole := obj{"Fn::GetAtt": []interface{}{roleID, "Arn"}}
	tmpl.HasResourceProperties(jsii.String("AWS::S3::BucketPolicy"), obj{
		"PolicyDocument": obj{"Statement": assertions.Match_ArrayWith(&[]interface{}{
			assertions.Match_ObjectLike(&obj{
				"Sid": "OnlyTheDeployerWritesState", "Effect": "Deny", "Principal": obj{"AWS": "*"},
				"Condition": obj{"ArnNotEquals": obj{"aws:PrincipalArn": lambdaRole}},
			}),
			assertions.Match_ObjectLike(&obj{"Sid": "OnlyTheDeployerAndUnlockersDeleteState", "Effect": "Deny", "Action": "s3:DeleteObject"}),
			assertions.Match_ObjectLike(&obj{"Sid": "UnlockersDeleteOnlyLocks", "Effect": "Deny", "Action": "s3:DeleteObject",
				"Condition": obj{"ArnNotEquals": obj{"aws:PrincipalArn": lambdaRole}}}),
		})},
	})
	params := raw["Parameters"].(obj)
	assert.Equal(t, "CommaDelimitedList", params[ParamUnlockPrincipals].(obj)["Type"])
	assert.Equal(t, "", params[ParamUnlockPrincipals].(obj)["Default"])
	assert.Equal(t, "", params[ParamTargetAccounts].(obj)["Default"])
	fnID := *d.Stack.GetLogicalId(d.Function.Node().DefaultChild().(awscdk.CfnElement))
	tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Permission"), obj{
		"Action": "lambda:InvokeFunction", "Principal": "states.amazonaws.com",
		"FunctionName": obj{"Fn::GetAtt": []interface{}{fnID, "Arn"}},
		"SourceArn":    obj{"Ref": onlyID(t, raw, "AWS::StepFunctions::StateMachine")},
	})
	tmpl.ResourceCountIs(jsii.String("AWS::Lambda::Permission"), jsii.Number(1))
	assert.NotContains(t, mustJSON(t, raw), "states:RedriveExecution", "nothing grants redrive")
}

func TestDeployerStateMachine(t *testing.T) {
	d, tmpl, raw := deployer(t)
	tmpl.HasResourceProperties(jsii.String("AWS::StepFunctions::StateMachine"), obj{
		"StateMachineName":     naming.StateMachineName,
		"StateMachineType":     "STANDARD",
		"LoggingConfiguration": assertions.Match_ObjectLike(&obj{"Level": "ALL", "IncludeExecutionData": true}),
	})
	// The logging and tracing the local region's DescribeStateMachine
	// reports (limits.StateMachine*, naming.StateMachineLogGroupName) are
	// what the stack deploys: one log group, the state machine's, whose
	// Arn (arn:aws:logs:REGION:ACCOUNT:log-group:NAME:*) is the
	// destination.
	var logGroupID string
	for id, lg := range resourcesOfType(raw, "AWS::Logs::LogGroup") {
		if lg["Properties"].(obj)["LogGroupName"] == naming.StateMachineLogGroupName {
			logGroupID = id
		}
	}
	require.NotEmpty(t, logGroupID, "a log group named %s", naming.StateMachineLogGroupName)
	smProps := raw["Resources"].(obj)[onlyID(t, raw, "AWS::StepFunctions::StateMachine")].(obj)["Properties"].(obj)
	assert.Equal(t, obj{
		"Level":                tuning.StateMachineLogLevel,
		"IncludeExecutionData": tuning.StateMachineLogExecutionData,
		"Destinations": []interface{}{obj{"CloudWatchLogsLogGroup": obj{
			"LogGroupArn": obj{"Fn::GetAtt": []interface{}{logGroupID, "Arn"}}}}},
	}, smProps["LoggingConfiguration"])
	assert.Equal(t, obj{"Enabled": tuning.StateMachineTracing}, smProps["TracingConfiguration"])
	// The deployed definition is the committed one, invoking this function.
	fnID := *d.Stack.GetLogicalId(d.Function.Node().DefaultChild().(awscdk.CfnElement))
	got, err := statemachine.ExtractDefinition(raw, obj{"Fn::GetAtt": []interface{}{fnID, "Arn"}})
	require.NoError(t, err)
	assert.Equal(t, string(definition.JSON()), string(got))

	smRole := *d.Stack.GetLogicalId(d.StateMachine.StateMachine.Role().Node().DefaultChild().(awscdk.CfnElement))
	assert.Equal(t, obj{"Fn::Join": []interface{}{"", []interface{}{"ferry-statemachine-", obj{"Ref": "AWS::Region"}}}},
		raw["Resources"].(obj)[smRole].(obj)["Properties"].(obj)["RoleName"], "the one principal the security page's SCP lets invoke the deployer")

	outputs := raw["Outputs"].(obj)
	require.Contains(t, outputs, naming.OutputStateMachineArn)
	require.Contains(t, outputs, naming.OutputBucketName)
	assert.Equal(t, obj{"Ref": onlyID(t, raw, "AWS::S3::Bucket")}, outputs[naming.OutputBucketName].(obj)["Value"])
	assert.Equal(t, obj{"Ref": onlyID(t, raw, "AWS::StepFunctions::StateMachine")}, outputs[naming.OutputStateMachineArn].(obj)["Value"])
}

// TestBootstrapTemplateIsUpToDate fails when infra/bootstrap/template.json
// differs from what the stack synthesizes. Refresh with `make synth` or
// `go test ./infra/stacks -update`.
func TestBootstrapTemplateIsUpToDate(t *testing.T) {
	got, err := BootstrapTemplate()
	require.NoError(t, err)
	path := filepath.Join("..", "bootstrap", "template.json")
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	committed, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(committed), string(got), "infra/bootstrap/template.json is stale: run `make synth` or `go test ./infra/stacks -update`")
	assert.Equal(t, string(bootstrap.Template()), string(committed))
}

func bootstrapJSON(t *testing.T) obj {
	t.Helper()
	var tmpl obj
	require.NoError(t, json.Unmarshal(bootstrap.Template(), &tmpl))
	return tmpl
}

func TestBootstrapTemplateIsSelfContained(t *testing.T) {
	raw := bootstrap.Template()
	assert.Less(t, len(raw), bootstrap.MaxTemplateBytes, "a StackSet TemplateBody is at most 50 KiB")
	tmpl := bootstrapJSON(t)
	var params []string
	for p := range tmpl["Parameters"].(obj) {
		params = append(params, p)
	}
	sort.Strings(params)
	assert.Equal(t, []string{ParamOrganizationID, ParamProjects, ParamQualifier, ParamTrustedAccounts}, params, "no asset or bootstrap version parameters")
	assert.Equal(t, ParamQualifier, bootstrap.ParamQualifier)
	assert.Equal(t, ParamTrustedAccounts, bootstrap.ParamTrustedAccounts)
	assert.NotContains(t, tmpl, "Rules", "no CheckBootstrapVersion rule")
	assert.NotContains(t, string(raw), "AWS::CDK::Metadata")
	assert.NotContains(t, string(raw), "aws:cdk:path")
	assert.NotContains(t, string(raw), "cdk-", "nothing refers to the CDK's own bootstrap")
	assert.NotContains(t, string(raw), "AssetParameters")
}

func TestBootstrapRoles(t *testing.T) {
	tmpl := bootstrapJSON(t)
	roles := resourcesOfType(tmpl, "AWS::IAM::Role")
	require.Len(t, roles, 2)
	tests := []struct {
		id, kind string
		policy   string
	}{
		{"DeployRole", "deploy", "deploy"},
		{"PublishRole", "publish", "publish"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			props := roles[tt.id]["Properties"].(obj)
			// Conventional names, qualified or not, from naming.
			name := mustJSON(t, props["RoleName"])
			assert.Contains(t, name, `"HasQualifier"`)
			assert.Contains(t, name, `"ferry-`+tt.kind+`-"`)
			assert.Contains(t, name, `"-`+tt.kind+`-"`)
			// Trusts the deployer Lambda role of the accounts given as the
			// parameter only, tagged with a project the environment
			// accepts and a config, setting a source identity of the
			// form naming.SourceIdentity makes, and optionally only
			// within an organization.
			assert.JSONEq(t, `{"Version":"2012-10-17","Statement":[{
				"Sid":"DeployerLambdaRoleOnly","Effect":"Allow","Action":["sts:AssumeRole","sts:TagSession"],
				"Principal":{"AWS":{"Ref":"TrustedAccounts"}},
				"Condition":{
					"ArnLike":{"aws:PrincipalArn":{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":iam::*:role/ferry-deployer-*"]]}},
					"ArnNotLike":{"aws:PrincipalArn":{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":iam::*:role/*/*"]]}},
					"StringLike":{"aws:RequestTag/ProjectName":{"Ref":"Projects"},"aws:RequestTag/ConfigName":"?*"},
					"ForAllValues:StringEquals":{"aws:TagKeys":["ProjectName","ConfigName"]}}},
				{"Sid":"DeployerLambdaRoleSourceIdentity","Effect":"Allow","Action":"sts:SetSourceIdentity",
				"Principal":{"AWS":{"Ref":"TrustedAccounts"}},
				"Condition":{
					"ArnLike":{"aws:PrincipalArn":{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":iam::*:role/ferry-deployer-*"]]}},
					"ArnNotLike":{"aws:PrincipalArn":{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":iam::*:role/*/*"]]}},
					"StringLike":{"sts:SourceIdentity":"?*@????????????"}}},
				{"Fn::If":["HasOrganization",{"Sid":"OrganizationOnly","Effect":"Deny","Action":["sts:AssumeRole","sts:TagSession","sts:SetSourceIdentity"],
					"Principal":{"AWS":"*"},"Condition":{"StringNotEquals":{"aws:PrincipalOrgID":{"Ref":"OrganizationId"}}}},
					{"Ref":"AWS::NoValue"}]}]}`,
				mustJSON(t, props["AssumeRolePolicyDocument"]))
			require.Len(t, props["Policies"], 1)
			assert.Equal(t, tt.policy, props["Policies"].([]interface{})[0].(obj)["PolicyName"])
		})
	}
}

func roleStatements(t *testing.T, role string) []obj {
	t.Helper()
	props := resourcesOfType(bootstrapJSON(t), "AWS::IAM::Role")[role]["Properties"].(obj)
	var out []obj
	for _, s := range props["Policies"].([]interface{})[0].(obj)["PolicyDocument"].(obj)["Statement"].([]interface{}) {
		out = append(out, s.(obj))
	}
	return out
}

// The deploy role manages only what its session's project-config owns:
// every allowed action that creates, changes or deletes is scoped by the
// session's tags (aws:PrincipalTag), as a request or resource tag
// condition or in the resource's name; nothing is a service wildcard; and
// the denies no later grant can reopen are there.
func TestBootstrapDeployRoleIsScoped(t *testing.T) {
	mutating := []string{"Create", "Delete", "Put", "Update", "Run", "Pass", "Attach", "Detach", "Set", "Terminate", "Suspend", "Resume", "Tag", "Modify"}
	byID := map[string]obj{}
	for _, s := range roleStatements(t, "DeployRole") {
		sid := s["Sid"].(string)
		byID[sid] = s
		for _, a := range strs(s["Action"]) {
			assert.NotEqual(t, "*", a, sid)
			assert.NotContains(t, a, "*", "%s: %s is a wildcard action", sid, a)
			verb := a[strings.Index(a, ":")+1:]
			isMutating := false
			for _, m := range mutating {
				isMutating = isMutating || strings.HasPrefix(verb, m)
			}
			if !isMutating || s["Effect"] != "Allow" || a == "iam:CreateServiceLinkedRole" {
				continue
			}
			scoped := mustJSON(t, s["Condition"]) + mustJSON(t, s["Resource"])
			if a == "events:PutEvents" {
				// EventBridge has no condition on an event's content: the
				// default bus and the source ferry scope it (security.md).
				assert.Contains(t, scoped, `"ForAllValues:StringEquals":{"events:source":"ferry"}`, sid)
				assert.Contains(t, scoped, `"Null":{"events:source":"false"}`, sid)
				assert.Contains(t, scoped, `:event-bus/default"`, sid)
				continue
			}
			if strings.HasPrefix(verb, "Run") && !strings.Contains(scoped, "PrincipalTag") {
				// Launching from images and subnets opted in with
				// DeployWith, or from a launch template.
				assert.Regexp(t, `ec2:ResourceTag/DeployWith":"ferry"|ec2:LaunchTemplate`, scoped, "%s: %s", sid, a)
				continue
			}
			assert.Contains(t, scoped, naming.PolicyVarProject, "%s: %s is scoped by the session's ProjectName", sid, a)
			assert.Contains(t, scoped, naming.PolicyVarConfig, "%s: %s is scoped by the session's ConfigName", sid, a)
		}
	}
	pass := byID["PassProjectConfigRoles"]
	require.NotNil(t, pass)
	assert.Equal(t, "iam:PassRole", pass["Action"])
	assert.Contains(t, mustJSON(t, pass["Resource"]), `:role/${aws:PrincipalTag/ProjectName}/${aws:PrincipalTag/ConfigName}/*"`)
	assert.Contains(t, mustJSON(t, byID["CreateProjectConfigGroups"]["Condition"]), `"aws:RequestTag/ProjectName":"${aws:PrincipalTag/ProjectName}"`)
	assert.Contains(t, mustJSON(t, byID["ManageProjectConfigGroups"]["Condition"]), `"aws:ResourceTag/ConfigName":"${aws:PrincipalTag/ConfigName}"`)
	assert.Contains(t, mustJSON(t, byID["PutProjectConfigAlarms"]["Resource"]), `:alarm:${aws:PrincipalTag/ProjectName}/${aws:PrincipalTag/ConfigName}/*`)
	assert.ElementsMatch(t, DeployRoleReadActions, strs(byID["Read"]["Action"]))
	for _, deny := range []string{"NeverRetagGroups", "NeverRetagEC2Resources", "NeverUntagEC2Resources", "NeverChangeLaunchTemplates", "NeverReadUserData"} {
		require.Contains(t, byID, deny)
		assert.Equal(t, "Deny", byID[deny]["Effect"], deny)
	}
	assert.ElementsMatch(t, naming.ReservedTags(), strs(byID["NeverRetagGroups"]["Condition"].(obj)["ForAnyValue:StringEquals"].(obj)["aws:TagKeys"]))
	assert.Equal(t, []interface{}{"sns:GetTopicAttributes", "sns:ListTagsForResource"}, byID["LifecycleTopics"]["Action"])
}

// grants reports whether one of statements allows action (IAM action
// patterns: case-insensitive, '*' matches any run of characters).
func grants(statements []obj, action string) bool {
	for _, s := range statements {
		if s["Effect"] != "Allow" {
			continue
		}
		for _, pat := range strs(s["Action"]) {
			if ok, _ := filepath.Match(strings.ToLower(pat), strings.ToLower(action)); ok {
				return true
			}
		}
	}
	return false
}

// TestBootstrapDeployRoleGrantsWhatFerryCalls: every call the deployer makes
// in a target (the methods of the cloud interfaces it signs with the deploy
// role) is allowed by the deploy role, and so are the permissions AWS checks
// besides the call's own (tags on create, launching from a template).
func TestBootstrapDeployRoleGrantsWhatFerryCalls(t *testing.T) {
	st := roleStatements(t, "DeployRole")
	services := map[reflect.Type]string{
		reflect.TypeFor[cloud.EC2]():         "ec2",
		reflect.TypeFor[cloud.AutoScaling](): "autoscaling",
		reflect.TypeFor[cloud.ELB]():         "elasticloadbalancing",
		reflect.TypeFor[cloud.ELBv2]():       "elasticloadbalancing",
		reflect.TypeFor[cloud.IAM]():         "iam",
		reflect.TypeFor[cloud.SNS]():         "sns",
		reflect.TypeFor[cloud.CloudWatch]():  "cloudwatch",
	}
	var actions []string
	for typ, prefix := range services {
		for i := range typ.NumMethod() {
			actions = append(actions, prefix+":"+typ.Method(i).Name)
		}
	}
	actions = append(actions,
		// PutMetricAlarm with Tags: "you must be signed on with both the
		// cloudwatch:PutMetricAlarm and cloudwatch:TagResource permissions".
		"cloudwatch:TagResource",
		// CreateLaunchTemplate with TagSpecifications.
		"ec2:CreateTags",
		// CreateAutoScalingGroup with a launch template and an instance
		// profile.
		"ec2:RunInstances", "iam:PassRole",
	)
	sort.Strings(actions)
	for _, a := range actions {
		assert.True(t, grants(st, a), "the deploy role does not allow %s", a)
	}
}

func TestBootstrapPublishRoleIsScoped(t *testing.T) {
	for _, s := range roleStatements(t, "PublishRole") {
		for _, a := range strs(s["Action"]) {
			assert.True(t, strings.HasPrefix(a, "s3:"), a)
		}
		assert.Contains(t, mustJSON(t, s["Resource"]), `"AssetBucket`, "publishing only into the asset bucket")
		if s["Sid"] == "AssetObjects" {
			assert.Contains(t, mustJSON(t, s["Resource"]), `"/`+naming.TargetAssetResource+`"`, "objects under the session's own assets/<project>/<config>/ only")
		}
	}
}

func TestBootstrapAssetBucket(t *testing.T) {
	stack := NewBootstrapStack(NewApp(), "b")
	tmpl := assertions.Template_FromStack(stack.Stack, nil)
	tmpl.ResourceCountIs(jsii.String("AWS::S3::Bucket"), jsii.Number(1))
	tmpl.HasResourceProperties(jsii.String("AWS::S3::Bucket"), obj{
		"BucketEncryption": obj{"ServerSideEncryptionConfiguration": []interface{}{
			obj{"ServerSideEncryptionByDefault": obj{"SSEAlgorithm": "AES256"}}}},
		"PublicAccessBlockConfiguration": obj{
			"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true},
		"BucketName": obj{"Fn::If": assertions.Match_ArrayWith(&[]interface{}{"HasQualifier"})},
	})
	tmpl.HasResourceProperties(jsii.String("AWS::S3::BucketPolicy"), obj{
		"PolicyDocument": obj{"Statement": assertions.Match_ArrayWith(&[]interface{}{assertions.Match_ObjectLike(&obj{
			"Effect": "Deny", "Condition": obj{"Bool": obj{"aws:SecureTransport": "false"}},
		})})},
	})
	// Published assets are immutable, and only the publish role writes.
	tmpl.HasResourceProperties(jsii.String("AWS::S3::BucketPolicy"), obj{
		"PolicyDocument": obj{"Statement": assertions.Match_ArrayWith(&[]interface{}{
			assertions.Match_ObjectLike(&obj{
				"Sid": "CreateOnly", "Effect": "Deny", "Action": "s3:PutObject", "Principal": obj{"AWS": "*"},
				"Condition": obj{"StringNotEquals": obj{"s3:if-none-match": "*"}},
			}),
			assertions.Match_ObjectLike(&obj{
				"Sid": "OnlyThePublishRoleWrites", "Effect": "Deny", "Principal": obj{"AWS": "*"},
				"Condition": obj{"ArnNotEquals": obj{"aws:PrincipalArn": obj{"Fn::GetAtt": []interface{}{"PublishRole", "Arn"}}}},
			}),
		})},
	})
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(dir, "go.mod"))
	return dir
}

func nodeTool(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join(repoRoot(t), "infra", "node_modules", rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is not installed: run `make tools` (npm ci --prefix infra)", p)
	}
	return p
}

// checkedTemplate is a template the offline checkers read: both stacks,
// the bootstrap template rendered for two trusted accounts, and a broken
// one (an unknown property) that proves a checker can fail.
type checkedTemplate struct {
	name  string
	path  string
	valid bool
}

func checkedTemplates(t *testing.T) []checkedTemplate {
	t.Helper()
	_, _, deployerTmpl := deployer(t)
	dir := t.TempDir()
	write := func(name string, v interface{}) string {
		p := filepath.Join(dir, name)
		b, ok := v.([]byte)
		if !ok {
			b = []byte(mustJSON(t, v))
		}
		require.NoError(t, os.WriteFile(p, b, 0o600))
		return p
	}
	broken := bootstrapJSON(t)
	broken["Resources"].(obj)["DeployRole"].(obj)["Properties"].(obj)["NotAProperty"] = true
	return []checkedTemplate{
		{"deployer", write("deployer.json", deployerTmpl), true},
		{"bootstrap", write("bootstrap.json", bootstrap.Template()), true},
		{"rendered bootstrap", write("rendered.json", mustRender(t)), true},
		{"broken (the checker can fail)", write("broken.json", broken), false},
	}
}

// Both templates pass AWS's offline CloudFormation validator, and the
// validator can fail.
func TestCloudFormationValidate(t *testing.T) {
	nodeTool(t, "@aws/cloudformation-validate/package.json")
	script := filepath.Join(repoRoot(t), "infra", "cfn-validate.mjs")
	for _, tt := range checkedTemplates(t) {
		t.Run(tt.name, func(t *testing.T) {
			out, err := exec.Command("node", script, tt.path).CombinedOutput()
			if tt.valid {
				assert.NoError(t, err, "cfn-validate: %s", out)
			} else {
				assert.Error(t, err, "cfn-validate accepted a broken template: %s", out)
			}
		})
	}
}

// cfnLintExplained are the cfn-lint findings ferry's templates keep, by
// rule and location, each with why it stays. Any other finding fails
// TestCfnLint, and so does an entry that no longer matches anything.
var cfnLintExplained = map[string]string{
	"deployer W3005 Resources/Function76856677/DependsOn/1": "the CDK makes the Lambda depend on its " +
		"role and on the role's default policy; the role dependency repeats the Fn::GetAtt of Role, the " +
		"policy one is needed (the function must not run before its policy exists), and the CDK writes both",
	"deployer W3005 Resources/DeployerStateMachine1633BC86/DependsOn/1": "the same for the state machine: " +
		"its DependsOn names its role (implied by Fn::GetAtt of RoleArn) and the role's default policy (needed)",
	"deployer W3037 Resources/BucketPolicyE9A3008A/Properties/PolicyDocument/Statement/1/Action": "cfn-lint's list of " +
		"S3 actions predates the object annotation actions (s3:PutObjectAnnotation and the like), which the Service " +
		"Authorization Reference lists and StateObjectWrites must deny (infra/iam checks the table against the reference)",
}

// Both templates pass cfn-lint (AWS CloudFormation Linter, the machine
// image's 1.51), with every remaining finding explained in
// cfnLintExplained; a broken template shows the linter can fail.
func TestCfnLint(t *testing.T) {
	if _, err := exec.LookPath("cfn-lint"); err != nil {
		t.Skip("cfn-lint is not on PATH (it comes with the machine image: PyPI is unreachable, so the project cannot install it)")
	}
	type finding struct {
		Filename string
		Level    string
		Message  string
		Location struct{ Path []any }
		Rule     struct{ Id string }
	}
	seen := map[string]bool{}
	for _, tt := range checkedTemplates(t) {
		t.Run(tt.name, func(t *testing.T) {
			// cfn-lint exits non-zero whenever it finds something; its JSON
			// says what.
			out, err := exec.Command("cfn-lint", "--format", "json", "--", tt.path).Output()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatalf("cfn-lint: %v", err)
			}
			var found []finding
			require.NoError(t, json.Unmarshal(out, &found), "cfn-lint output: %s", out)
			var unexplained []string
			errs := 0
			for _, f := range found {
				path := make([]string, len(f.Location.Path))
				for i, p := range f.Location.Path {
					path[i] = fmt.Sprint(p)
				}
				key := strings.Fields(tt.name)[0] + " " + f.Rule.Id + " " + strings.Join(path, "/")
				if f.Level == "Error" {
					errs++
				}
				if _, ok := cfnLintExplained[key]; ok && tt.valid {
					seen[key] = true
					continue
				}
				unexplained = append(unexplained, fmt.Sprintf("%s (%s: %s)", key, f.Level, f.Message))
			}
			if tt.valid {
				assert.Empty(t, unexplained, "cfn-lint findings not in cfnLintExplained")
			} else {
				assert.NotZero(t, errs, "cfn-lint found no error in a broken template: %s", out)
			}
		})
	}
	for key := range cfnLintExplained {
		assert.True(t, seen[key], "cfnLintExplained has %q, which cfn-lint no longer reports: remove it", key)
	}
}

func mustRender(t *testing.T) []byte {
	t.Helper()
	b, err := bootstrap.Render([]string{"111111111111", "222222222222"}, "blue")
	require.NoError(t, err)
	return b
}

// TestReconcileSchedule: EventBridge Scheduler starts a reconcile pass of
// the deploy state machine at the ReconcileRate parameter's rate (default
// every 15 minutes), as a role only the scheduler of this account assumes
// and that may start executions of that state machine and nothing else;
// the Lambda learns AssetKeepReleases from its environment.
func TestReconcileSchedule(t *testing.T) {
	_, _, raw := deployer(t)
	sched := raw["Resources"].(obj)[onlyID(t, raw, "AWS::Scheduler::Schedule")].(obj)["Properties"].(obj)
	assert.Equal(t, obj{"Ref": ParamReconcileRate}, sched["ScheduleExpression"])
	assert.Equal(t, obj{"Mode": "OFF"}, sched["FlexibleTimeWindow"])
	target := sched["Target"].(obj)
	smID := onlyID(t, raw, "AWS::StepFunctions::StateMachine")
	assert.Equal(t, obj{"Ref": smID}, target["Arn"])
	var in map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(target["Input"].(string)), &in))
	assert.Contains(t, in, "reconcile_pass", "the entry Choice's reconcile rule")
	param := raw["Parameters"].(obj)[ParamReconcileRate].(obj)
	assert.Equal(t, "rate(15 minutes)", param["Default"])

	roleID := target["RoleArn"].(obj)["Fn::GetAtt"].([]interface{})[0].(string)
	role := raw["Resources"].(obj)[roleID].(obj)["Properties"].(obj)
	trust := mustJSON(t, role["AssumeRolePolicyDocument"])
	assert.Contains(t, trust, `"Service":"scheduler.amazonaws.com"`)
	assert.Contains(t, trust, `"aws:SourceAccount"`)
	var granted []obj
	for _, p := range resourcesOfType(raw, "AWS::IAM::Policy") {
		props := p["Properties"].(obj)
		if mustJSON(t, props["Roles"]) == mustJSON(t, []interface{}{obj{"Ref": roleID}}) {
			for _, s := range props["PolicyDocument"].(obj)["Statement"].([]interface{}) {
				granted = append(granted, s.(obj))
			}
		}
	}
	require.Len(t, granted, 1, "one statement")
	assert.Equal(t, "states:StartExecution", granted[0]["Action"])
	assert.Equal(t, obj{"Ref": smID}, granted[0]["Resource"])

	// A pass keeps the assets of each config's newest AssetKeepReleases.
	keep := raw["Parameters"].(obj)[ParamAssetKeepReleases].(obj)
	assert.EqualValues(t, tuning.AssetKeepReleases, keep["Default"])
	assert.EqualValues(t, 1, keep["MinValue"])
	fn := raw["Resources"].(obj)[onlyID(t, raw, "AWS::Lambda::Function")].(obj)["Properties"].(obj)
	env := fn["Environment"].(obj)["Variables"].(obj)
	assert.Equal(t, obj{"Ref": ParamAssetKeepReleases}, env[naming.EnvAssetKeepReleases])
}
