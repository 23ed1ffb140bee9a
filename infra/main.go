// Command infra is ferry's CDK app: the DeployerStack (ferry-deployer) and
// the BootstrapStack (ferry-bootstrap). `go run ./infra` synthesizes both
// into CDK_OUTDIR (make synth); the CDK CLI runs it through infra/cdk.json.
//
// The context value ferry:lambdaDir (default build/lambda, relative to the
// working directory) names the directory holding the Lambda's bootstrap
// executable (make build). The context value ferry:scpTargets adds the
// optional ferry-guardrails stack (ContextSCPTargets).
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/ferryhq/ferry/infra/stacks"
	"github.com/ferryhq/ferry/internal/naming"
)

// ContextLambdaDir is the context key naming the Lambda's directory.
const ContextLambdaDir = "ferry:lambdaDir"

// ContextSCPTargets is the context key naming, comma-separated, the
// organizational units or accounts to attach ferry's service control
// policy to: the app then also defines the ferry-guardrails stack, for the
// organization's management account (off by default).
const ContextSCPTargets = "ferry:scpTargets"

func main() {
	defer jsii.Close()
	if err := synth(); err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		os.Exit(1)
	}
}

// synth defines the app and synthesizes it.
func synth() error {
	app := stacks.NewApp()
	if _, err := define(app); err != nil {
		return err
	}
	app.Synth(nil)
	return nil
}

// define adds both stacks to app.
func define(app awscdk.App) (*stacks.Deployer, error) {
	lambdaDir := "build/lambda"
	if v, ok := app.Node().TryGetContext(jsii.String(ContextLambdaDir)).(string); ok && v != "" {
		lambdaDir = v
	}
	d, err := stacks.NewDeployerStack(app, naming.DeployerStackName, &stacks.DeployerProps{LambdaDir: lambdaDir})
	if err != nil {
		return nil, err
	}
	stacks.NewBootstrapStack(app, naming.BootstrapStackName)
	if v, ok := app.Node().TryGetContext(jsii.String(ContextSCPTargets)).(string); ok && v != "" {
		if _, err := stacks.NewGuardrailsStack(app, "ferry-guardrails", &stacks.GuardrailsProps{TargetIds: strings.Split(v, ",")}); err != nil {
			return nil, err
		}
	}
	return d, nil
}
