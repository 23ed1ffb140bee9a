package stacks

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
)

// Parameters and conditions of the BootstrapStack.
const (
	// ParamTrustedAccounts lists the deployer accounts whose deployer
	// Lambda role (naming.DeployerRoleName) the roles trust.
	ParamTrustedAccounts = "TrustedAccounts"
	// ParamQualifier is the optional qualifier of the physical names.
	ParamQualifier = "Qualifier"
	// ParamOrganizationID optionally restricts the trust to principals of
	// one AWS Organization (aws:PrincipalOrgID).
	ParamOrganizationID = "OrganizationId"
	// ParamProjects lists the patterns of the projects the environment
	// accepts (default naming.AllProjects): the roles' trust requires the
	// ProjectName session tag to match one (naming.ProjectAccepted).
	ParamProjects = "Projects"
	// ProjectsPattern is the AllowedPattern of each Projects value: a
	// project name ("org/name" of lowercase letters, digits, '.', '_',
	// '-'), with IAM's wildcards * and ?.
	ProjectsPattern = "^[a-z0-9._*?-]+/[a-z0-9._*?-]+$"
	// ConditionHasQualifier is true when Qualifier is not empty.
	ConditionHasQualifier = "HasQualifier"
	// ConditionHasOrganization is true when OrganizationId is not empty.
	ConditionHasOrganization = "HasOrganization"
	// QualifierPattern is the Qualifier's AllowedPattern (bucket names
	// allow lowercase letters and digits).
	QualifierPattern = "^[a-z0-9]*$"
	// AccountPattern is the AllowedPattern of each TrustedAccounts value:
	// CloudFormation applies a CommaDelimitedList's pattern to every
	// value of the list.
	AccountPattern = "^[0-9]{12}$"
	// OrganizationPattern is the OrganizationId's AllowedPattern.
	OrganizationPattern = "^(o-[a-z0-9]{10,32})?$"
)

// Outputs of the BootstrapStack.
const (
	OutputDeployRoleArn   = "DeployRoleArn"
	OutputPublishRoleArn  = "PublishRoleArn"
	OutputAssetBucketName = "AssetBucketName"
)

// Bootstrap is the BootstrapStack and its resources.
type Bootstrap struct {
	Stack       awscdk.Stack
	DeployRole  awsiam.CfnRole
	PublishRole awsiam.CfnRole
	AssetBucket awss3.Bucket
}

// NewBootstrapStack defines the bootstrap of one target environment. It uses
// the bootstrapless synthesizer: the template has no asset or bootstrap
// version parameters and needs no CDK bootstrap to deploy.
//
// Every permission of the deploy role is scoped by the session tags the
// deployer assumes it with (ProjectName and ConfigName of the release,
// cloud.Session), so a session touches only its own project-config's
// groups, launch templates, alarms and roles: see the security help page
// (client/help/security.md), and infra/iam for the proof with an
// independent IAM engine.
//
// The parts, in the order they are defined (which is the template's
// order): the parameters and conditions (newBootstrapParams), the roles'
// trust (trustPolicy), the asset bucket (assetBucket), the deploy role
// (deployPolicy, in deployrole.go), the publish role (publishPolicy), the
// bucket's policy (onlyThePublishRoleWrites) and the outputs.
func NewBootstrapStack(scope constructs.Construct, id string) *Bootstrap {
	stack := awscdk.NewStack(scope, jsii.String(id), &awscdk.StackProps{
		Description:        jsii.String("ferry bootstrap: the deploy role, publish role and asset bucket of one target environment"),
		Synthesizer:        awscdk.NewBootstraplessSynthesizer(&awscdk.BootstraplessSynthesizerProps{}),
		AnalyticsReporting: jsii.Bool(false),
	})
	p := newBootstrapParams(stack)
	trust := p.trustPolicy()
	bucket := p.assetBucket()
	deployRole := p.role("DeployRole", naming.DeployRoleName,
		"ferry: the deployer assumes this role, tagged with a release's project and config, to deploy that project-config's Auto Scaling groups",
		trust, "deploy", deployPolicy())
	publishRole := p.role("PublishRole", naming.PublishRoleName,
		"ferry: the deployer assumes this role to publish assets into the asset bucket",
		trust, "publish", publishPolicy(bucket))
	onlyThePublishRoleWrites(bucket, publishRole)

	awscdk.NewCfnOutput(stack, jsii.String(OutputDeployRoleArn), &awscdk.CfnOutputProps{Value: deployRole.AttrArn()})
	awscdk.NewCfnOutput(stack, jsii.String(OutputPublishRoleArn), &awscdk.CfnOutputProps{Value: publishRole.AttrArn()})
	awscdk.NewCfnOutput(stack, jsii.String(OutputAssetBucketName), &awscdk.CfnOutputProps{Value: bucket.BucketName()})
	return &Bootstrap{Stack: stack, DeployRole: deployRole, PublishRole: publishRole, AssetBucket: bucket}
}

// bootstrapParams are the BootstrapStack and its parameters and
// conditions, which the trust and the physical names are built from.
type bootstrapParams struct {
	stack                             awscdk.Stack
	trusted, qualifier, org, projects awscdk.CfnParameter
	hasQualifier, hasOrg              awscdk.CfnCondition
}

// newBootstrapParams defines the parameters and conditions of stack.
func newBootstrapParams(stack awscdk.Stack) *bootstrapParams {
	str := jsii.String
	p := &bootstrapParams{stack: stack}
	p.trusted = awscdk.NewCfnParameter(stack, str(ParamTrustedAccounts), &awscdk.CfnParameterProps{
		Type:           str("CommaDelimitedList"),
		AllowedPattern: str(AccountPattern),
		Description:    str("The deployer account(s) whose deployer Lambda role (" + naming.DeployerRoleNamePattern + ") may assume the deploy and publish roles: 12-digit account ids"),
	})
	p.qualifier = awscdk.NewCfnParameter(stack, str(ParamQualifier), &awscdk.CfnParameterProps{
		Type:           str("String"),
		Default:        str(""),
		MaxLength:      jsii.Number(limits.MaxQualifierLen),
		AllowedPattern: str(QualifierPattern),
		Description:    str("Optional qualifier of the physical names (lowercase letters and digits), for several bootstraps of one environment"),
	})
	p.org = awscdk.NewCfnParameter(stack, str(ParamOrganizationID), &awscdk.CfnParameterProps{
		Type:           str("String"),
		Default:        str(""),
		AllowedPattern: str(OrganizationPattern),
		Description:    str("Optional AWS Organization id (o-...): the roles then trust only principals of that organization"),
	})
	p.projects = awscdk.NewCfnParameter(stack, str(ParamProjects), &awscdk.CfnParameterProps{
		Type:           str("CommaDelimitedList"),
		Default:        str(naming.AllProjects),
		AllowedPattern: str(ProjectsPattern),
		Description:    str("The projects this environment accepts: project names (org/name) or patterns with * and ?, e.g. acme/shop,payments/*; default every project"),
	})
	p.hasQualifier = awscdk.NewCfnCondition(stack, str(ConditionHasQualifier), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(p.qualifier.ValueAsString(), str(""))),
	})
	p.hasOrg = awscdk.NewCfnCondition(stack, str(ConditionHasOrganization), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(p.org.ValueAsString(), str(""))),
	})
	return p
}

// name is the physical name f gives the stack's account and region, with
// the Qualifier when one is given.
func (p *bootstrapParams) name(f func(account, region, qualifier string) string) *string {
	account, region := *awscdk.Aws_ACCOUNT_ID(), *awscdk.Aws_REGION()
	return awscdk.Token_AsString(awscdk.Fn_ConditionIf(p.hasQualifier.LogicalId(),
		f(account, region, *p.qualifier.ValueAsString()), f(account, region, "")), nil)
}

// trustPolicy is the trust of both roles: the deployer Lambda role of each
// trusted account, only with the session tags every permission is scoped
// by, for a project the environment accepts. Principal is the accounts
// (their root), narrowed to the role by aws:PrincipalArn: a role ARN as
// Principal would fail while the deployer is not deployed. A role with a
// path never matches (role names cannot hold '/'). The deployer sets the
// source identity of who asked for the release (naming.SourceIdentity),
// which CloudTrail then records with every call of the session:
// sts:SetSourceIdentity supports no request tag keys, so it has a
// statement of its own, on the same principal. With an OrganizationId,
// principals of other organizations are denied.
func (p *bootstrapParams) trustPolicy() map[string]interface{} {
	partition := *awscdk.Aws_PARTITION()
	assume := []string{"sts:AssumeRole", "sts:TagSession", "sts:SetSourceIdentity"}
	deployerRole := map[string]interface{}{
		"ArnLike":    map[string]interface{}{"aws:PrincipalArn": "arn:" + partition + ":iam::*:role/" + naming.DeployerRoleNamePattern},
		"ArnNotLike": map[string]interface{}{"aws:PrincipalArn": "arn:" + partition + ":iam::*:role/*/*"},
	}
	trustStatements := []interface{}{map[string]interface{}{
		"Sid":       "DeployerLambdaRoleOnly",
		"Effect":    "Allow",
		"Action":    assume[:2],
		"Principal": map[string]interface{}{"AWS": p.trusted.ValueAsList()},
		"Condition": map[string]interface{}{
			"ArnLike":    deployerRole["ArnLike"],
			"ArnNotLike": deployerRole["ArnNotLike"],
			"StringLike": map[string]interface{}{
				"aws:RequestTag/" + naming.TagProjectName: p.projects.ValueAsList(),
				"aws:RequestTag/" + naming.TagConfigName:  "?*",
			},
			"ForAllValues:StringEquals": map[string]interface{}{"aws:TagKeys": naming.SessionTagKeys()},
		},
	}, map[string]interface{}{
		"Sid":       "DeployerLambdaRoleSourceIdentity",
		"Effect":    "Allow",
		"Action":    assume[2],
		"Principal": map[string]interface{}{"AWS": p.trusted.ValueAsList()},
		"Condition": map[string]interface{}{
			"ArnLike":    deployerRole["ArnLike"],
			"ArnNotLike": deployerRole["ArnNotLike"],
			"StringLike": map[string]interface{}{"sts:SourceIdentity": naming.SourceIdentityPattern},
		},
	}}
	trustStatements = append(trustStatements, awscdk.Fn_ConditionIf(p.hasOrg.LogicalId(), map[string]interface{}{
		"Sid":       "OrganizationOnly",
		"Effect":    "Deny",
		"Action":    assume,
		"Principal": map[string]interface{}{"AWS": "*"},
		"Condition": map[string]interface{}{"StringNotEquals": map[string]interface{}{"aws:PrincipalOrgID": p.org.ValueAsString()}},
	}, awscdk.Aws_NO_VALUE()))
	return map[string]interface{}{"Version": "2012-10-17", "Statement": trustStatements}
}

// assetBucket is the bucket the publish role publishes assets into:
// private, encrypted, retained when the stack is deleted.
func (p *bootstrapParams) assetBucket() awss3.Bucket {
	return awss3.NewBucket(p.stack, jsii.String("AssetBucket"), &awss3.BucketProps{
		BucketName:        p.name(naming.AssetBucketName),
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		RemovalPolicy:     awscdk.RemovalPolicy_RETAIN,
		LifecycleRules: &[]*awss3.LifecycleRule{{
			Id:                                  jsii.String("abort-incomplete-uploads"),
			AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(1)),
		}},
	})
}

// role defines one of the bootstrap's roles: named by nameOf, trusting as
// trust says, for sessions of at most an hour, holding policy as its one
// inline policy policyName.
func (p *bootstrapParams) role(id string, nameOf func(account, region, qualifier string) string, description string,
	trust map[string]interface{}, policyName string, policy awsiam.PolicyDocument) awsiam.CfnRole {
	return awsiam.NewCfnRole(p.stack, jsii.String(id), &awsiam.CfnRoleProps{
		RoleName:                 p.name(nameOf),
		Description:              jsii.String(description),
		AssumeRolePolicyDocument: trust,
		MaxSessionDuration:       jsii.Number(3600),
		Policies: &[]interface{}{&awsiam.CfnRole_PolicyProperty{
			PolicyName:     jsii.String(policyName),
			PolicyDocument: policy,
		}},
	})
}

// publishPolicy is the publish role's policy: a session reads, writes and
// deletes only its own project-config's assets (its session tags): the
// release holding that project-config's lock is the only writer of its
// prefix, so it may collect it.
func publishPolicy(bucket awss3.Bucket) awsiam.PolicyDocument {
	assets := bucket.ArnForObjects(jsii.String(naming.TargetAssetResource))
	return awsiam.NewPolicyDocument(&awsiam.PolicyDocumentProps{Statements: &[]awsiam.PolicyStatement{
		statement(awsiam.PolicyStatementProps{
			// GetObject also authorizes HeadObject. The bucket policy
			// makes every write create-only (If-None-Match).
			Sid:       jsii.String("AssetObjects"),
			Actions:   jsii.Strings("s3:GetObject", "s3:PutObject", "s3:DeleteObject"),
			Resources: &[]*string{assets},
		}),
		statement(awsiam.PolicyStatementProps{
			// So that HeadObject of a missing asset is a 404, not a 403,
			// and CleanUpSuccess can list its project-config's assets.
			// Unconditioned: HeadObject has no s3:prefix to match.
			Sid:       jsii.String("AssetBucketList"),
			Actions:   jsii.Strings("s3:ListBucket"),
			Resources: &[]*string{bucket.BucketArn()},
		}),
	}})
}

// onlyThePublishRoleWrites adds the asset bucket's policy: published
// assets are immutable, every PutObject must be create-only
// (If-None-Match: *, condition key s3:if-none-match), and only the publish
// role writes or deletes anything.
func onlyThePublishRoleWrites(bucket awss3.Bucket, publishRole awsiam.CfnRole) {
	objects := bucket.ArnForObjects(jsii.String("*"))
	bucket.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("CreateOnly"),
		Effect:     awsiam.Effect_DENY,
		Principals: &[]awsiam.IPrincipal{awsiam.NewAnyPrincipal()},
		Actions:    jsii.Strings("s3:PutObject"),
		Resources:  &[]*string{objects},
		Conditions: conditions(map[string]interface{}{"StringNotEquals": map[string]interface{}{"s3:if-none-match": "*"}}),
	}))
	bucket.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("OnlyThePublishRoleWrites"),
		Effect:     awsiam.Effect_DENY,
		Principals: &[]awsiam.IPrincipal{awsiam.NewAnyPrincipal()},
		Actions: jsii.Strings("s3:PutObject", "s3:PutObjectAcl", "s3:PutObjectTagging", "s3:PutObjectRetention",
			"s3:PutObjectLegalHold", "s3:DeleteObject", "s3:DeleteObjectVersion", "s3:DeleteObjectTagging",
			"s3:RestoreObject"),
		Resources:  &[]*string{objects},
		Conditions: conditions(map[string]interface{}{"ArnNotEquals": map[string]interface{}{"aws:PrincipalArn": publishRole.AttrArn()}}),
	}))
}

// statement is a policy statement of p, allowing unless p says otherwise.
func statement(p awsiam.PolicyStatementProps) awsiam.PolicyStatement {
	if p.Effect == "" {
		p.Effect = awsiam.Effect_ALLOW
	}
	return awsiam.NewPolicyStatement(&p)
}

// conditions is c as a statement's Conditions.
func conditions(c map[string]interface{}) *map[string]interface{} { return &c }
