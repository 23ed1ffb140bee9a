package iam

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/infra/bootstrap"
	"github.com/ferryhq/ferry/infra/stacks"
	"github.com/ferryhq/ferry/internal/naming"
)

// Accounts and principals of the evaluation. The deployer runs in
// deployerAccount and deploys into it and targetAccount (TargetAccounts);
// foreignAccount is nobody ferry trusts.
const (
	foreignAccount = "999999999999"
	orgID          = "o-ferryexample1"
	operatorARN    = "arn:aws:iam::" + deployerAccount + ":role/ferry-operator"
)

var (
	lambdaRoleARN = naming.RoleARN(deployerAccount, naming.DeployerRoleName(awsRegion))
	smRoleARN     = naming.RoleARN(deployerAccount, naming.StateMachineRoleName(awsRegion))
	scheduleARN   = naming.RoleARN(deployerAccount, naming.ReconcileScheduleRoleName(awsRegion))
)

// policies are ferry's policies as CloudFormation deploys them, by name,
// plus those of the other principals the attacks use.
type policies struct {
	docs map[string]any
	// statements are the ferry statements whose condition keys must be
	// supported by their actions.
	statements []statementKeys
	lambdaARN  string
	smARN      string
	bucket     string
}

type statementKeys struct {
	Policy        string   `json:"policy"`
	Sid           string   `json:"sid"`
	Effect        string   `json:"effect"`
	Actions       []string `json:"actions"`
	ConditionKeys []string `json:"conditionKeys"`
}

func lambdaDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bootstrap"), []byte("#!/bin/sh\n"), 0o755))
	return dir
}

// ferryPolicies synthesizes both stacks and resolves them: the bootstrap
// template (the committed one) in deployerAccount and targetAccount, once
// more with an OrganizationId, once more accepting only other projects
// (Projects), and the DeployerStack in deployerAccount
// with TargetAccounts both and an operator in UnlockPrincipals.
func ferryPolicies(t *testing.T) *policies {
	t.Helper()
	p := &policies{docs: map[string]any{}}
	var boot obj
	require.NoError(t, json.Unmarshal(bootstrap.Template(), &boot))
	for _, v := range []struct {
		name, account, org, projects string
	}{
		{deployerAccount, deployerAccount, "", naming.AllProjects},
		{targetAccount, targetAccount, "", naming.AllProjects},
		{"org-" + targetAccount, targetAccount, orgID, naming.AllProjects},
		{"payments-" + targetAccount, targetAccount, "", "payments/*," + otherProject},
	} {
		s, err := newStack(boot, v.account, awsRegion, map[string]any{
			stacks.ParamTrustedAccounts: deployerAccount, stacks.ParamQualifier: "", stacks.ParamOrganizationID: v.org,
			stacks.ParamProjects: v.projects,
		})
		require.NoError(t, err)
		deployRole, err := s.resource("DeployRole")
		require.NoError(t, err)
		publishRole, err := s.resource("PublishRole")
		require.NoError(t, err)
		p.docs["trust-"+v.name] = deployRole["AssumeRolePolicyDocument"]
		p.docs["deploy-"+v.name] = firstPolicy(deployRole)
		p.docs["publish-"+v.name] = firstPolicy(publishRole)
		bp, err := s.resource(s.ofType("AWS::S3::BucketPolicy")[0])
		require.NoError(t, err)
		p.docs["assets-"+v.name] = bp["PolicyDocument"]
		if v.name == deployerAccount {
			p.addStatements(t, "trust", deployRole["AssumeRolePolicyDocument"])
			p.addStatements(t, "deploy", firstPolicy(deployRole))
			p.addStatements(t, "publish", firstPolicy(publishRole))
			p.addStatements(t, "asset bucket", bp["PolicyDocument"])
		}
	}

	d, err := stacks.NewDeployerStack(stacks.NewApp(), naming.DeployerStackName, &stacks.DeployerProps{LambdaDir: lambdaDir(t)})
	require.NoError(t, err)
	raw, err := json.Marshal(assertions.Template_FromStack(d.Stack, nil).ToJSON())
	require.NoError(t, err)
	var dep obj
	require.NoError(t, json.Unmarshal(raw, &dep))
	// The deployer's defaults (no UnlockPrincipals): only its bucket
	// policy differs.
	defaults, err := newStack(dep, deployerAccount, awsRegion, map[string]any{stacks.ParamTargetAccounts: deployerAccount + "," + targetAccount})
	require.NoError(t, err)
	bp, err := defaults.resource(defaults.ofType("AWS::S3::BucketPolicy")[0])
	require.NoError(t, err)
	p.docs["deployer-bucket-default"] = bp["PolicyDocument"]
	s, err := newStack(dep, deployerAccount, awsRegion, map[string]any{
		stacks.ParamTargetAccounts:   deployerAccount + "," + targetAccount,
		stacks.ParamUnlockPrincipals: operatorARN,
	})
	require.NoError(t, err)
	p.addServiceTrusts(t, s)
	for _, id := range s.ofType("AWS::IAM::Policy") {
		pol, err := s.resource(id)
		require.NoError(t, err)
		roles := fmt.Sprint(pol["Roles"])
		switch {
		case strings.Contains(roles, naming.DeployerRoleName(awsRegion)):
			p.docs["lambda"] = pol["PolicyDocument"]
			p.addStatements(t, "lambda", pol["PolicyDocument"])
		case strings.Contains(roles, naming.StateMachineRoleName(awsRegion)):
			// The role has two policies: its default one (invoke the
			// function) and the nested executions'; IAM grants their union.
			p.docs["statemachine"] = mergePolicies(p.docs["statemachine"], pol["PolicyDocument"])
			p.addStatements(t, "state machine", pol["PolicyDocument"])
		case strings.Contains(roles, naming.ReconcileScheduleRoleName(awsRegion)):
			p.docs["reconcile-schedule"] = pol["PolicyDocument"]
			p.addStatements(t, "reconcile schedule", pol["PolicyDocument"])
		default:
			t.Fatalf("a policy of an unknown role: %v", roles)
		}
	}
	bp, err = s.resource(s.ofType("AWS::S3::BucketPolicy")[0])
	require.NoError(t, err)
	p.docs["deployer-bucket"] = bp["PolicyDocument"]
	p.addStatements(t, "deployer bucket", bp["PolicyDocument"])
	p.bucket = naming.DeployerBucketName(deployerAccount, awsRegion)
	for _, name := range []string{"ci", "release-managers"} {
		p.docs["page-"+name] = pagePolicy(t, name)
	}
	_, p.lambdaARN, err = s.physical(s.ofType("AWS::Lambda::Function")[0])
	require.NoError(t, err)
	p.smARN, _, err = s.physical(s.ofType("AWS::StepFunctions::StateMachine")[0])
	require.NoError(t, err)
	perm, err := s.resource(s.ofType("AWS::Lambda::Permission")[0])
	require.NoError(t, err)
	p.docs["lambda-invoke"] = obj{"Version": "2012-10-17", "Statement": []any{obj{
		"Sid": "InvokedByTheStateMachineOnly", "Effect": "Allow", "Principal": obj{"Service": perm["Principal"]},
		"Action": perm["Action"], "Resource": perm["FunctionName"],
		"Condition": obj{"ArnLike": obj{"aws:SourceArn": perm["SourceArn"]}, "StringEquals": obj{"aws:SourceAccount": perm["SourceAccount"]}},
	}}}

	// What others may have: an administrator of an account (everything),
	// and a foreign account's role that trusts the deployer's account
	// whole (the attacks must fail even then).
	everything := obj{"Version": "2012-10-17", "Statement": []any{obj{"Effect": "Allow", "Action": "*", "Resource": "*"}}}
	p.docs["admin"] = everything
	p.docs["trusts-deployer-account"] = obj{"Version": "2012-10-17", "Statement": []any{obj{
		"Effect": "Allow", "Principal": obj{"AWS": "arn:aws:iam::" + deployerAccount + ":root"},
		"Action": []any{"sts:AssumeRole", "sts:TagSession"}}}}
	return p
}

func firstPolicy(role obj) any {
	return asObj(role["Policies"].([]any)[0])["PolicyDocument"]
}

func list(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, fmt.Sprint(e))
		}
		return out
	}
	return nil
}

func (p *policies) addStatements(t *testing.T, policy string, doc any) {
	t.Helper()
	for _, st := range asObj(doc)["Statement"].([]any) {
		s := asObj(st)
		var keys []string
		for _, block := range asObj(s["Condition"]) {
			for k := range asObj(block) {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			continue
		}
		actions := list(s["Action"])
		require.NotEmpty(t, actions, "%s %v: a statement with conditions names its actions", policy, s["Sid"])
		sid, _ := s["Sid"].(string)
		p.statements = append(p.statements, statementKeys{Policy: policy, Sid: sid, Effect: fmt.Sprint(s["Effect"]), Actions: actions, ConditionKeys: keys})
	}
}

// addServiceTrusts adds the trust policies of the deployer's service roles
// (the Lambda's, the state machine's, the reconcile schedule's) as
// "trust-" + the role's name.
func (p *policies) addServiceTrusts(t *testing.T, s *stack) {
	t.Helper()
	for _, id := range s.ofType("AWS::IAM::Role") {
		role, err := s.resource(id)
		require.NoError(t, err)
		name, _ := role["RoleName"].(string)
		require.NotEmpty(t, name, "role %s has a conventional name", id)
		p.docs["trust-"+name] = role["AssumeRolePolicyDocument"]
		p.addStatements(t, "trust of "+name, role["AssumeRolePolicyDocument"])
	}
}

// pagePolicy is the pipeline help page's (client/help/pipeline.md)
// example client policy marked
// <!-- policy: name -->.
func pagePolicy(t *testing.T, name string) any {
	t.Helper()
	page, err := os.ReadFile(filepath.Join("..", "..", "client", "help", "pipeline.md"))
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)<!-- policy: " + regexp.QuoteMeta(name) + " -->\\s*```json\\n(.*?)```").FindSubmatch(page)
	require.NotNil(t, m, "client/help/pipeline.md has no <!-- policy: %s --> JSON block", name)
	var doc any
	require.NoError(t, json.Unmarshal(m[1], &doc), "the pipeline page's %s policy is not JSON", name)
	return doc
}

// statementsOf are a policy document's statements.
func statementsOf(doc any) []any {
	m, _ := doc.(map[string]any)
	switch st := m["Statement"].(type) {
	case []any:
		return st
	case nil:
		return nil
	default:
		return []any{st}
	}
}

// mergePolicies is one policy document with the statements of a (nil:
// none) and b.
func mergePolicies(a, b any) any {
	return map[string]any{"Version": "2012-10-17", "Statement": append(statementsOf(a), statementsOf(b)...)}
}
