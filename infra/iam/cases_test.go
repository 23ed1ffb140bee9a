package iam

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
)

// evalCase is one request for the engine (see check.mjs).
type evalCase struct {
	Name            string         `json:"name"`
	Kind            string         `json:"kind"` // "call" or "attack"
	Principal       string         `json:"principal"`
	Action          string         `json:"action"`
	Resource        string         `json:"resource"`
	ResourceAccount string         `json:"resourceAccount"`
	Identity        []string       `json:"identity"`
	ResourcePolicy  string         `json:"resourcePolicy,omitempty"`
	SCP             bool           `json:"scp"`
	Context         map[string]any `json:"context"`
}

// principal is who makes a request: the request's principal (a session
// ARN, or a role or user), its aws:PrincipalArn, account, session tags,
// organization and identity policies.
type principal struct {
	arn, roleARN, account string
	tags                  map[string]string
	org                   string
	identity              []string
}

// session is a role session of roleARN.
func session(roleARN, name string, tags map[string]string, identity ...string) principal {
	account, role := splitRoleARN(roleARN)
	return principal{arn: "arn:aws:sts::" + account + ":assumed-role/" + role + "/" + name, roleARN: roleARN,
		account: account, tags: tags, org: orgID, identity: identity}
}

func splitRoleARN(arn string) (account, name string) {
	rest := strings.TrimPrefix(arn, "arn:aws:iam::")
	account, role, _ := strings.Cut(rest, ":role/")
	return account, role[strings.LastIndex(role, "/")+1:]
}

// request is p's request of action on resource, with extra context keys.
// Every request is evaluated under the security page's SCP, as in an organization
// that applies it.
func (p principal) request(kind, name, action, resource, resourcePolicy string, extra map[string]any) evalCase {
	ctx := map[string]any{"aws:PrincipalArn": p.roleARN, "aws:PrincipalAccount": p.account}
	if p.org != "" {
		ctx["aws:PrincipalOrgID"] = p.org
	}
	for k, v := range p.tags {
		ctx["aws:PrincipalTag/"+k] = v
	}
	for k, v := range extra {
		ctx[k] = v
	}
	return evalCase{Name: name, Kind: kind, Principal: p.arn, Action: action, Resource: concrete(resource),
		ResourceAccount: accountOf(resource, p.account), Identity: p.identity, ResourcePolicy: resourcePolicy, SCP: true, Context: ctx}
}

// concrete names one resource where the simulation names a pattern (the
// instances a group will launch: instance/*).
func concrete(resource string) string {
	if resource != "*" && strings.HasSuffix(resource, "*") {
		return strings.TrimSuffix(resource, "*") + "pending"
	}
	return resource
}

// accountOf is the account of an ARN (S3 buckets: of the bucket's
// conventional name), or def.
func accountOf(arn, def string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) == 6 && parts[4] != "" {
		return parts[4]
	}
	if strings.HasPrefix(arn, "arn:aws:s3:::") {
		for _, a := range []string{deployerAccount, targetAccount, foreignAccount} {
			if strings.Contains(arn, "-"+a+"-") {
				return a
			}
		}
	}
	return def
}

// arrayKeys are the condition keys whose values are lists.
var arrayKeys = map[string]bool{"aws:TagKeys": true, "cloudwatch:AlarmActions": true,
	"autoscaling:TargetGroupARNs": true, "autoscaling:LoadBalancerNames": true,
	"events:source": true, "events:detail-type": true}

// authContext is the condition context of a recorded authorization: the
// resource's tags (aws:ResourceTag, and the service's own ResourceTag key
// for EC2 and Auto Scaling), the request's tags and tag keys, and the
// call's other condition keys.
func authContext(a sim.Auth) map[string]any {
	ctx := map[string]any{}
	service, _, _ := strings.Cut(a.Action, ":")
	for k, v := range a.ResourceTags {
		ctx["aws:ResourceTag/"+k] = v
		if service == "ec2" || service == "autoscaling" {
			ctx[service+":ResourceTag/"+k] = v
		}
	}
	var keys []string
	for k, v := range a.RequestTags {
		ctx["aws:RequestTag/"+k] = v
		keys = append(keys, k)
	}
	if len(keys) > 0 {
		sort.Strings(keys)
		ctx["aws:TagKeys"] = keys
	}
	for k, v := range a.Context {
		switch {
		case arrayKeys[k]:
			ctx[k] = v
		case len(v) > 0:
			ctx[k] = v[0]
		}
	}
	return ctx
}

var lambda = principal{arn: "arn:aws:sts::" + deployerAccount + ":assumed-role/" + naming.DeployerRoleName(awsRegion) + "/" + naming.DeployerFunctionName,
	roleARN: lambdaRoleARN, account: deployerAccount, org: orgID, identity: []string{"lambda"}}

// callCases are the authorizations of every AWS call the scenario made,
// each evaluated once (identical requests are one case), named after the
// first call that needed it.
func callCases(calls []sim.Call, s3calls []s3Call, p *policies) ([]evalCase, int) {
	var out []evalCase
	seen := map[string]bool{}
	add := func(c evalCase) {
		c.Kind = "call"
		key := fmt.Sprint(c.Principal, c.Action, c.Resource, c.Identity, c.ResourcePolicy, c.Context)
		if !seen[key] {
			seen[key] = true
			out = append(out, c)
		}
	}
	for i, c := range calls {
		if c.Principal == "" {
			continue
		}
		name := fmt.Sprintf("call %d %s:%s", i, c.Service, c.Op)
		if c.Op == "AssumeRole" {
			for _, a := range c.Auth {
				account, _ := splitRoleARN(a.Resource)
				add(lambda.request("", name+" "+a.Action, a.Action, a.Resource, "trust-"+account, authContext(a)))
				// The Connector assumes the publish role with the same
				// session, on the first Assets call (the simulation has no
				// S3 of its own, so it is not in its log).
				publish := strings.Replace(a.Resource, ":role/ferry-deploy-", ":role/ferry-publish-", 1)
				add(lambda.request("", name+" (publish role) "+a.Action, a.Action, publish, "trust-"+account, authContext(a)))
			}
			continue
		}
		account, role, _ := strings.Cut(strings.TrimPrefix(c.Principal, "arn:aws:sts::"), ":assumed-role/")
		role, sessionName, _ := strings.Cut(role, "/")
		who := session(naming.RoleARN(account, role), sessionName, c.SessionTags, "deploy-"+account)
		for _, a := range c.Auth {
			add(who.request("", name+" "+a.Action+" "+a.Resource, a.Action, a.Resource, "", authContext(a)))
		}
	}
	for i, c := range s3calls {
		name := fmt.Sprintf("s3 %d %s %s/%s", i, c.Op, c.Bucket, c.Key)
		who, policy := lambda, "deployer-bucket"
		if c.Store == "assets" {
			account := accountOf("arn:aws:s3:::"+c.Bucket, "")
			// The publish role session carries the tags of the release's
			// project-config, which its keys are under.
			config, _, _ := strings.Cut(strings.TrimPrefix(c.Key, "assets/"+naming.ProjectPrefix(project)), "/")
			who = session(naming.RoleARN(account, naming.PublishRoleName(account, awsRegion, "")), "publish",
				map[string]string{naming.TagProjectName: project, naming.TagConfigName: config}, "publish-"+account)
			policy = "assets-" + account
		}
		object := "arn:aws:s3:::" + c.Bucket + "/" + c.Key
		ctx := map[string]any{}
		if c.IfNoneMatch {
			ctx["s3:if-none-match"] = "*"
		}
		switch c.Op {
		case "GetObject", "HeadObject":
			add(who.request("", name, "s3:GetObject", object, policy, nil))
		case "PutObject":
			add(who.request("", name, "s3:PutObject", object, policy, ctx))
			if c.Tagging {
				add(who.request("", name+" (x-amz-tagging)", "s3:PutObjectTagging", object, policy, nil))
			}
		case "DeleteObject":
			add(who.request("", name, "s3:DeleteObject", object, policy, nil))
		case "ListObjectsV2":
			add(who.request("", name, "s3:ListBucket", "arn:aws:s3:::"+c.Bucket, policy, map[string]any{"s3:prefix": c.Key}))
		default:
			panic("unknown S3 op " + c.Op)
		}
	}
	// The state machine invokes the function (its role's grant), and a
	// client and an operator do what ferry's client does.
	sm := session(smRoleARN, "execution", nil, "statemachine")
	add(sm.request("", "the state machine invokes the deployer", "lambda:InvokeFunction", p.lambdaARN, "lambda-invoke", nil))
	// A promotion's wave runs nested executions of the machine itself
	// (startExecution.sync:2): Step Functions starts, follows and stops
	// them, and uses its managed rule, as the state machine's role.
	execution := strings.Replace(p.smARN, ":stateMachine:", ":execution:", 1) + ":coinbase_deploy-test_staging_p1"
	add(sm.request("", "a promotion's wave starts a nested deploy", "states:StartExecution", p.smARN, "", nil))
	add(sm.request("", "a promotion's wave follows a nested deploy", "states:DescribeExecution", execution, "", nil))
	add(sm.request("", "a promotion's wave stops a nested deploy when cancelled", "states:StopExecution", execution, "", nil))
	managedRule := "arn:aws:events:" + awsRegion + ":" + deployerAccount + ":rule/StepFunctionsGetEventsForStepFunctionsExecutionRule"
	for _, action := range []string{"events:PutTargets", "events:PutRule", "events:DescribeRule"} {
		add(sm.request("", "a promotion's wave uses the managed rule ("+action+")", action, managedRule, "", nil))
	}
	sched := session(scheduleARN, "schedule", nil, "reconcile-schedule")
	add(sched.request("", "the schedule starts a reconcile pass", "states:StartExecution", p.smARN, "", nil))
	fn := session(lambdaRoleARN, "deployer", nil, "lambda")
	add(fn.request("", "a reconcile pass starts a heal", "states:StartExecution", p.smARN, "", nil))
	add(fn.request("", "a reconcile pass deletes an asset no recent release names", "s3:DeleteObject",
		"arn:aws:s3:::"+p.bucket+"/"+naming.AssetKey(project, "development", strings.Repeat("b", 64)), "deployer-bucket", nil))
	publish := session(naming.RoleARN(targetAccount, naming.PublishRoleName(targetAccount, awsRegion, "")), "publish",
		map[string]string{naming.TagProjectName: project, naming.TagConfigName: "development"}, "publish-"+targetAccount)
	add(publish.request("", "CleanUpSuccess deletes a published asset no recent release names", "s3:DeleteObject",
		"arn:aws:s3:::"+naming.AssetBucketName(targetAccount, awsRegion, "")+"/"+naming.TargetAssetKey(project, "development", strings.Repeat("b", 64)),
		"assets-"+targetAccount, nil))
	dev := session("arn:aws:iam::"+deployerAccount+":role/developer", "alice", nil, "admin")
	obj := func(key string) string { return "arn:aws:s3:::" + p.bucket + "/" + key }
	once := map[string]any{"s3:if-none-match": "*"}
	add(dev.request("", "ferry deploy uploads the release", "s3:PutObject", obj(naming.ReleaseKey(project, "development", "r9")), "deployer-bucket", once))
	add(dev.request("", "ferry deploy uploads an asset", "s3:PutObject", obj(naming.AssetKey(project, "development", strings.Repeat("a", 64))), "deployer-bucket", once))
	add(dev.request("", "ferry halt writes the halt marker", "s3:PutObject", obj(naming.HaltKey(project, "development")), "deployer-bucket", nil))
	add(dev.request("", "ferry status reads what is deployed", "s3:GetObject", obj(naming.CurrentKey(project, "development")), "deployer-bucket", nil))
	add(dev.request("", "ferry status reads the lock", "s3:GetObject", obj(naming.LockKey(project, "development")), "deployer-bucket", nil))
	add(dev.request("", "ferry status reads an outcome", "s3:GetObject", obj(naming.OutcomeKey(project, "development", "r9")), "deployer-bucket", nil))
	add(dev.request("", "ferry deploy starts the execution", "states:StartExecution", p.smARN, "", nil))
	add(dev.request("", "ferry pipeline register writes the pipeline into a config", "s3:PutObject", obj(naming.PipelineKey(project, "staging")), "deployer-bucket", nil))
	add(dev.request("", "ferry pipeline start stores the request", "s3:PutObject", obj(naming.PromotionRequestKey(project, "development", "p1")), "deployer-bucket", once))
	add(dev.request("", "ferry pipeline approve stores an approval", "s3:PutObject", obj(naming.ApprovalKey(project, "production", "p1")), "deployer-bucket", nil))
	add(dev.request("", "ferry pipeline approve reads a promotion's record", "s3:GetObject", obj(naming.PromotionRecordKey(project, "development", "p1")), "deployer-bucket", nil))
	add(dev.request("", "ferry pipeline halt writes the promotion's halt marker", "s3:PutObject", obj(naming.PromotionHaltKey(project, "development", "p1")), "deployer-bucket", nil))
	add(dev.request("", "ferry pipeline status reads a promotion's record", "s3:GetObject", obj(naming.PromotionRecordKey(project, "development", "p1")), "deployer-bucket", nil))
	// The pipeline page's example policies: CI registers before production and
	// starts promotions; release managers register in production and
	// approve it.
	ci := session("arn:aws:iam::"+deployerAccount+":role/ci", "build-42", nil, "page-ci")
	add(ci.request("", "the pipeline page's CI policy registers the pipeline in staging", "s3:PutObject", obj(naming.PipelineKey(project, "staging")), "deployer-bucket", nil))
	add(ci.request("", "the pipeline page's CI policy stores a promotion's request", "s3:PutObject", obj(naming.PromotionRequestKey(project, "development", "p1")), "deployer-bucket", once))
	add(ci.request("", "the pipeline page's CI policy starts the promotion", "states:StartExecution", p.smARN, "", nil))
	managers := session("arn:aws:iam::"+deployerAccount+":role/release-managers", "carol", nil, "page-release-managers")
	add(managers.request("", "the pipeline page's release managers register the pipeline in production-use1", "s3:PutObject", obj(naming.PipelineKey(project, "production-use1")), "deployer-bucket", nil))
	add(managers.request("", "the pipeline page's release managers ask the deployer to verify their approval", "states:StartExecution", p.smARN, "", nil))
	add(managers.request("", "the pipeline page's release managers approve production", "s3:PutObject", obj(naming.ApprovalKey(project, "production", "p1")), "deployer-bucket", nil))
	add(managers.request("", "the pipeline page's release managers wake the approval's wait", "states:SendTaskSuccess", "*", "", nil))
	// The services assume the deployer's roles for its own resources, and
	// the administrator of the SCP deploys the deployer.
	assume := func(service, role, sourceARN string) evalCase {
		return evalCase{Name: service + " assumes " + role, Principal: service, Action: "sts:AssumeRole",
			Resource: naming.RoleARN(deployerAccount, role), ResourceAccount: deployerAccount, ResourcePolicy: "trust-" + role,
			Context: map[string]any{"aws:SourceAccount": deployerAccount, "aws:SourceArn": sourceARN}}
	}
	add(assume("states.amazonaws.com", naming.StateMachineRoleName(awsRegion), p.smARN))
	add(assume("lambda.amazonaws.com", naming.DeployerRoleName(awsRegion), p.lambdaARN))
	add(assume("scheduler.amazonaws.com", naming.ReconcileScheduleRoleName(awsRegion), "arn:aws:scheduler:"+awsRegion+":"+deployerAccount+":schedule-group/default"))
	admin := session(naming.RoleARN(deployerAccount, "ferry-admin"), "cloudformation", nil, "admin")
	add(admin.request("", "the SCP's administrator updates the deployer's code", "lambda:UpdateFunctionCode", p.lambdaARN, "", nil))
	add(admin.request("", "the SCP's administrator passes the deployer's role to its function", "iam:PassRole", lambdaRoleARN,
		"", map[string]any{"iam:PassedToService": "lambda.amazonaws.com"}))
	add(admin.request("", "the SCP's administrator creates the state machine's role", "iam:CreateRole", smRoleARN, "", nil))
	add(admin.request("", "the SCP's administrator sets the deployer bucket's policy", "s3:PutBucketPolicy", "arn:aws:s3:::"+p.bucket, "deployer-bucket", nil))
	op := session(operatorARN, "bob", nil, "admin")
	add(op.request("", "ferry unlock deletes a lock", "s3:DeleteObject", obj(naming.LockKey(project, "development")), "deployer-bucket", nil))
	return out, len(calls) + len(s3calls)
}
