package stacks

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsorganizations"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// GuardrailsProps configures NewGuardrails.
type GuardrailsProps struct {
	// TargetIds are the organizational units or accounts the service
	// control policy is attached to: those of the deployer accounts.
	// Required.
	TargetIds []string
	// Administrator is the ARN pattern of the role that may change the
	// deployer (ServiceControlPolicy); default DefaultAdministrator.
	Administrator string
}

// NewGuardrails defines ferry's service control policy
// (ServiceControlPolicy) as an AWS Organizations policy attached to
// props.TargetIds, in scope. It is optional and off by default: an
// Organizations policy is created from the organization's management
// account (or a delegated administrator), not from the deployer account,
// so it belongs in a stack of its own (the app defines one only when the
// context value ferry:scpTargets names targets). No targets is an error.
func NewGuardrails(scope constructs.Construct, id string, props *GuardrailsProps) (awsorganizations.CfnPolicy, error) {
	if props == nil || len(props.TargetIds) == 0 {
		return nil, fmt.Errorf("guardrails: TargetIds is required: the organizational units or accounts of the deployer accounts")
	}
	admin := props.Administrator
	if admin == "" {
		admin = DefaultAdministrator
	}
	return awsorganizations.NewCfnPolicy(scope, jsii.String(id), &awsorganizations.CfnPolicyProps{
		Name:        jsii.String("ferry-deployer-guardrails"),
		Description: jsii.String("ferry: only the deploy state machine invokes the deployer; only the administrator changes it or its roles"),
		Type:        jsii.String("SERVICE_CONTROL_POLICY"),
		Content:     ServiceControlPolicy(admin),
		TargetIds:   jsii.Strings(props.TargetIds...),
	}), nil
}

// NewGuardrailsStack is a stack holding only NewGuardrails, for the
// organization's management account.
func NewGuardrailsStack(scope constructs.Construct, id string, props *GuardrailsProps) (awscdk.Stack, error) {
	stack := awscdk.NewStack(scope, jsii.String(id), &awscdk.StackProps{
		Description:        jsii.String("ferry guardrails: the service control policy of the deployer accounts"),
		AnalyticsReporting: jsii.Bool(false),
	})
	if _, err := NewGuardrails(stack, "ServiceControlPolicy", props); err != nil {
		return nil, err
	}
	return stack, nil
}
