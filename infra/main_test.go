package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/naming"
)

func TestDefineRefusesAMissingLambda(t *testing.T) {
	app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]interface{}{ContextLambdaDir: t.TempDir()}})
	_, err := define(app)
	assert.ErrorContains(t, err, "make build")
}

// The app synthesizes both stacks, the deployer's Lambda from the
// directory the context names.
func TestSynthesizesBothStacks(t *testing.T) {
	lambda := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(lambda, "bootstrap"), []byte("#!/bin/sh\n"), 0o755))
	out := t.TempDir()
	app := awscdk.NewApp(&awscdk.AppProps{
		Outdir:  jsii.String(out),
		Context: &map[string]interface{}{ContextLambdaDir: lambda},
	})
	_, err := define(app)
	require.NoError(t, err)
	asm := app.Synth(nil)
	assert.Equal(t, out, *asm.Directory())
	for _, s := range []string{naming.DeployerStackName, naming.BootstrapStackName} {
		assert.FileExists(t, filepath.Join(out, s+".template.json"))
	}
	assert.NotNil(t, asm.GetStackByName(jsii.String(naming.BootstrapStackName)))

	// The pinned CDK CLI reads the cloud assembly this CDK writes (aws-cdk
	// 3.x cannot).
	cdk := filepath.Join("node_modules", ".bin", "cdk")
	if _, err := os.Stat(cdk); err != nil {
		t.Fatalf("%s is not installed: run `make tools` (npm ci --prefix infra)", cdk)
	}
	ls, err := exec.Command(cdk, "--app", out, "ls", "--no-notices", "--no-version-reporting").CombinedOutput()
	require.NoError(t, err, "cdk ls: %s", ls)
	assert.ElementsMatch(t, []string{naming.DeployerStackName, naming.BootstrapStackName}, strings.Fields(string(ls)))
}

// The guardrails stack (the SCP as an Organizations policy) is defined
// only when the context names its targets.
func TestGuardrailsStackIsOptIn(t *testing.T) {
	lambda := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(lambda, "bootstrap"), []byte("#!/bin/sh\n"), 0o755))
	for _, targets := range []string{"", "ou-abcd-12345678,123456789012"} {
		ctx := map[string]interface{}{ContextLambdaDir: lambda}
		if targets != "" {
			ctx[ContextSCPTargets] = targets
		}
		app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir()), Context: &ctx})
		_, err := define(app)
		require.NoError(t, err)
		asm := app.Synth(nil)
		var names []string
		for _, s := range *asm.Stacks() {
			names = append(names, *s.StackName())
		}
		if targets == "" {
			assert.NotContains(t, names, "ferry-guardrails")
		} else {
			assert.Contains(t, names, "ferry-guardrails")
		}
	}
}
