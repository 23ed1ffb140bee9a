package statemachine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	"github.com/ferryhq/ferry/statemachine/definition"
)

// functionParameter is the CloudFormation parameter of the throwaway stack
// RenderDefinition synthesizes; its Ref is where the function ARN goes.
const functionParameter = "DeployerFunctionArn"

// RenderDefinition synthesizes the deploy state machine in a throwaway stack
// and returns its Amazon States Language definition with
// definition.FunctionARNPlaceholder where the deployer function's ARN goes,
// formatted as definition.Format does. It is what make synth writes to
// statemachine/definition/definition.asl.json.
func RenderDefinition() ([]byte, error) {
	app := awscdk.NewApp(&awscdk.AppProps{})
	stack := awscdk.NewStack(app, jsii.String("FerryDefinition"), &awscdk.StackProps{
		Synthesizer: awscdk.NewBootstraplessSynthesizer(&awscdk.BootstraplessSynthesizerProps{}),
	})
	arn := awscdk.NewCfnParameter(stack, jsii.String(functionParameter), &awscdk.CfnParameterProps{
		Type: jsii.String("String"),
	})
	fn := awslambda.Function_FromFunctionAttributes(stack, jsii.String("Function"), &awslambda.FunctionAttributes{
		FunctionArn:     arn.ValueAsString(),
		SameEnvironment: jsii.Bool(true),
	})
	New(stack, "Deployer", &Props{Function: fn})
	tmpl := assertions.Template_FromStack(stack, nil).ToJSON()
	return ExtractDefinition(*tmpl, map[string]interface{}{"Ref": functionParameter})
}

// ExtractDefinition returns the definition of the one
// AWS::StepFunctions::StateMachine of a synthesized template, with every
// part of its DefinitionString that equals functionARN (the ARN as the
// template spells it, e.g. {"Fn::GetAtt": [id, "Arn"]}) replaced by
// definition.FunctionARNPlaceholder, formatted as definition.Format does. It
// fails when the template has no or several state machines, or when the
// definition holds any other unresolved token.
func ExtractDefinition(template map[string]interface{}, functionARN interface{}) ([]byte, error) {
	resources, _ := template["Resources"].(map[string]interface{})
	var found []interface{}
	for _, r := range resources {
		res, _ := r.(map[string]interface{})
		if res["Type"] == "AWS::StepFunctions::StateMachine" {
			props, _ := res["Properties"].(map[string]interface{})
			found = append(found, props["DefinitionString"])
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("extract definition: template has %d AWS::StepFunctions::StateMachine resources, want 1", len(found))
	}
	var parts []interface{}
	switch d := found[0].(type) {
	case string:
		parts = []interface{}{d}
	case map[string]interface{}:
		join, ok := d["Fn::Join"].([]interface{})
		if !ok || len(join) != 2 || join[0] != "" {
			return nil, fmt.Errorf("extract definition: DefinitionString is %v, want a string or an Fn::Join with an empty delimiter", d)
		}
		parts, ok = join[1].([]interface{})
		if !ok {
			return nil, fmt.Errorf("extract definition: Fn::Join parts are %T, want a list", join[1])
		}
	default:
		return nil, fmt.Errorf("extract definition: DefinitionString is %T, want a string or an Fn::Join", d)
	}
	var b bytes.Buffer
	for i, p := range parts {
		switch {
		case isString(p):
			b.WriteString(p.(string))
		case reflect.DeepEqual(p, functionARN):
			b.WriteString(definition.FunctionARNPlaceholder)
		default:
			tok, _ := json.Marshal(p)
			return nil, fmt.Errorf("extract definition: part %d of DefinitionString is the token %s, want a string or the function ARN", i, tok)
		}
	}
	return definition.Format(b.Bytes())
}

func isString(v interface{}) bool { _, ok := v.(string); return ok }
