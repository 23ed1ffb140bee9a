package stacks

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/ferryhq/ferry/infra/bootstrap"
	"github.com/ferryhq/ferry/internal/naming"
)

// NewApp returns a CDK app that writes no construct path metadata and no
// version reporting into templates, so templates are stable.
func NewApp() awscdk.App {
	return awscdk.NewApp(&awscdk.AppProps{
		AnalyticsReporting: jsii.Bool(false),
		Context: &map[string]interface{}{
			"aws:cdk:enable-path-metadata": false,
			"aws:cdk:version-reporting":    false,
		},
	})
}

// BootstrapTemplate synthesizes the BootstrapStack and returns its template
// formatted as bootstrap.Format does: what make synth writes to
// infra/bootstrap/template.json.
func BootstrapTemplate() ([]byte, error) {
	stack := NewBootstrapStack(NewApp(), naming.BootstrapStackName)
	b, err := json.Marshal(assertions.Template_FromStack(stack.Stack, nil).ToJSON())
	if err != nil {
		return nil, fmt.Errorf("bootstrap template: %w", err)
	}
	return bootstrap.Format(b)
}
