package statemachine

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/statemachine/definition"
)

var update = flag.Bool("update", false, "rewrite definition/definition.asl.json from the construct")

const definitionFile = "definition/definition.asl.json"

// TestDefinitionIsUpToDate fails when the committed definition differs from
// what the construct synthesizes. Refresh with `go test ./statemachine
// -update` or `make synth`.
func TestDefinitionIsUpToDate(t *testing.T) {
	got, err := RenderDefinition()
	require.NoError(t, err)
	if *update {
		require.NoError(t, os.WriteFile(definitionFile, got, 0o644))
	}
	committed, err := os.ReadFile(definitionFile)
	require.NoError(t, err)
	assert.Equal(t, string(committed), string(got),
		"%s is stale: run `make synth` or `go test ./statemachine -update`", filepath.ToSlash(definitionFile))
	assert.Equal(t, string(definition.JSON()), string(committed), "package definition embeds the committed file")
}

func TestNewWiresTheFunction(t *testing.T) {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Test"), nil)
	fn := awslambda.NewFunction(stack, jsii.String("Fn"), &awslambda.FunctionProps{
		Runtime: awslambda.Runtime_NODEJS_20_X(),
		Handler: jsii.String("index.handler"),
		Code:    awslambda.Code_FromInline(jsii.String("exports.handler = async () => ({})")),
	})
	d := New(stack, "Deployer", &Props{Function: fn, StateMachineName: "ferry-test"})
	require.NotNil(t, d.StateMachine)

	tmpl := assertions.Template_FromStack(stack, nil)
	tmpl.ResourceCountIs(jsii.String("AWS::StepFunctions::StateMachine"), jsii.Number(1))
	tmpl.HasResourceProperties(jsii.String("AWS::StepFunctions::StateMachine"), map[string]interface{}{
		"StateMachineName": "ferry-test",
		"StateMachineType": "STANDARD",
	})
	// The machine's role may invoke the function.
	tmpl.HasResourceProperties(jsii.String("AWS::IAM::Policy"), map[string]interface{}{
		"PolicyDocument": map[string]interface{}{
			"Statement": assertions.Match_ArrayWith(&[]interface{}{
				assertions.Match_ObjectLike(&map[string]interface{}{
					"Action":   "lambda:InvokeFunction",
					"Effect":   "Allow",
					"Resource": assertions.Match_ArrayWith(&[]interface{}{map[string]interface{}{"Fn::GetAtt": []interface{}{*stack.GetLogicalId(fn.Node().DefaultChild().(awscdk.CfnElement)), "Arn"}}}),
				}),
			}),
		},
	})
	// The machine's role may start itself, follow and stop its executions,
	// and use the managed rule: a promotion's nested executions.
	sids := map[string]interface{}{}
	for _, p := range *tmpl.FindResources(jsii.String("AWS::IAM::Policy"), nil) {
		doc := (*p)["Properties"].(map[string]interface{})["PolicyDocument"].(map[string]interface{})
		for _, st := range doc["Statement"].([]interface{}) {
			if sid, ok := st.(map[string]interface{})["Sid"].(string); ok {
				sids[sid] = st.(map[string]interface{})["Action"]
			}
		}
	}
	assert.Equal(t, "states:StartExecution", sids["StartItself"])
	assert.Equal(t, []interface{}{"states:DescribeExecution", "states:StopExecution"}, sids["FollowItsExecutions"])
	assert.Equal(t, []interface{}{"events:PutTargets", "events:PutRule", "events:DescribeRule"}, sids["ManagedExecutionRule"])
	// The synthesized definition is the committed one with this function's
	// ARN in place of the placeholder.
	fnArn := map[string]interface{}{"Fn::GetAtt": []interface{}{*stack.GetLogicalId(fn.Node().DefaultChild().(awscdk.CfnElement)), "Arn"}}
	got, err := ExtractDefinition(*tmpl.ToJSON(), fnArn)
	require.NoError(t, err)
	assert.Equal(t, string(definition.JSON()), string(got))
}

func TestNewRequiresFunction(t *testing.T) {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Test"), nil)
	assert.PanicsWithValue(t, "statemachine.New: Props.Function is required", func() { New(stack, "D", &Props{}) })
	assert.Panics(t, func() { New(stack, "E", nil) })
}

func TestExtractDefinitionRefuses(t *testing.T) {
	arn := map[string]interface{}{"Ref": "Fn"}
	sm := func(def interface{}) map[string]interface{} {
		return map[string]interface{}{"Type": "AWS::StepFunctions::StateMachine", "Properties": map[string]interface{}{"DefinitionString": def}}
	}
	tests := []struct {
		name     string
		template map[string]interface{}
		want     string
	}{
		{"no state machine", map[string]interface{}{"Resources": map[string]interface{}{}}, "0 AWS::StepFunctions::StateMachine"},
		{"two state machines", map[string]interface{}{"Resources": map[string]interface{}{"A": sm("{}"), "B": sm("{}")}}, "2 AWS::StepFunctions::StateMachine"},
		{"other token", map[string]interface{}{"Resources": map[string]interface{}{"A": sm(map[string]interface{}{
			"Fn::Join": []interface{}{"", []interface{}{`{"a":"`, map[string]interface{}{"Ref": "Other"}, `"}`}},
		})}}, `{"Ref":"Other"}`},
		{"join with a delimiter", map[string]interface{}{"Resources": map[string]interface{}{"A": sm(map[string]interface{}{
			"Fn::Join": []interface{}{",", []interface{}{"{}"}},
		})}}, "empty delimiter"},
		{"not JSON", map[string]interface{}{"Resources": map[string]interface{}{"A": sm("{")}}, "format definition"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ExtractDefinition(tt.template, arn)
			assert.ErrorContains(t, err, tt.want)
		})
	}
	out, err := ExtractDefinition(map[string]interface{}{"Resources": map[string]interface{}{"A": sm(map[string]interface{}{
		"Fn::Join": []interface{}{"", []interface{}{`{"Resource":"`, arn, `"}`}},
	})}}, arn)
	require.NoError(t, err)
	assert.JSONEq(t, `{"Resource":"`+definition.FunctionARNPlaceholder+`"}`, string(out))
}
