package naming

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Policy variables of the session tags the deployer sets when it assumes a
// target's roles (see RoleSessionName): the bootstrap template's policies
// scope what a deploy role session may touch with them, and the
// simulation's checks substitute the session's values for them.
const (
	PolicyVarProject = "${aws:PrincipalTag/" + TagProjectName + "}"
	PolicyVarConfig  = "${aws:PrincipalTag/" + TagConfigName + "}"
)

// SessionTagKeys are the session tags every role session of a target's
// deploy and publish roles carries: the project and config of the release
// it acts for. The bootstrap roles' trust requires both.
func SessionTagKeys() []string { return []string{TagProjectName, TagConfigName} }

// PassRoleResource is the resource, after "arn:<partition>:iam::<account>:",
// of the roles a deploy role session may pass to EC2 and Auto Scaling
// (instance profile roles and lifecycle hook roles): roles under its own
// project-config's path (ProjectConfigPath, which InstanceProfilePath
// extends), never one at the root path or another project's. The bootstrap
// template's iam:PassRole statement and the simulation's check of it are
// both made from it.
const PassRoleResource = "role" + "/" + PolicyVarProject + "/" + PolicyVarConfig + "/*"

// Expand substitutes a session's project and config for PolicyVarProject
// and PolicyVarConfig in an IAM pattern, as IAM does at evaluation time.
func Expand(pattern, project, config string) string {
	return strings.NewReplacer(PolicyVarProject, project, PolicyVarConfig, config).Replace(pattern)
}

// Passable reports whether a deploy role session of project/config may
// pass the role with this path and name: whether "role"+path+name matches
// PassRoleResource with the session's tags, with IAM's wildcards.
func Passable(project, config, path, name string) bool {
	return WildcardMatch(Expand(PassRoleResource, project, config), "role"+path+name)
}

// HookRoleTrust is the service principal a lifecycle hook's role must
// trust: Auto Scaling assumes it to publish the hook's notifications.
const HookRoleTrust = "autoscaling.amazonaws.com"

// DeployerRoleName is the physical name of the deployer Lambda's execution
// role in the deployer's account and region. IAM role names are global to
// an account, so the region is part of it: at most 15 + 15 characters,
// well under IAM's 64. The bootstrap roles trust only roles of this name
// (DeployerRoleNamePattern) in the trusted accounts, so the name is
// reserved: only an administrator of a deployer account should create
// roles named ferry-deployer-*.
func DeployerRoleName(region string) string { return "ferry-deployer-" + region }

// DeployerRoleNamePattern matches DeployerRoleName of every region: what a
// bootstrap role's trust policy accepts (aws:PrincipalArn), since a
// trusted deployer may run in any region.
var DeployerRoleNamePattern = DeployerRoleName("*")

// AllProjects is the IAM pattern of every project name ("org/name"): the
// default of the bootstrap template's Projects parameter, which lists the
// patterns of the projects a bootstrapped environment accepts. The deploy
// and publish roles' trust requires the ProjectName session tag to match
// one of them (StringLike), so an environment can refuse every project
// but its own, whatever the deployer's Lambda asks.
const AllProjects = "?*/?*"

// ProjectAccepted reports whether a bootstrapped environment whose
// Projects parameter lists patterns accepts project, as its roles' trust
// decides (StringLike: any pattern matches, with IAM's wildcards). No
// patterns means the default, AllProjects.
func ProjectAccepted(patterns []string, project string) bool {
	if len(patterns) == 0 {
		patterns = []string{AllProjects}
	}
	for _, p := range patterns {
		if WildcardMatch(p, project) {
			return true
		}
	}
	return false
}

// MaxRoleSessionNameLen is STS's limit on a role session name.
const MaxRoleSessionNameLen = 64

// RoleSessionName is the name of the role sessions the deployer opens in a
// target for one release, so CloudTrail tells which release acted. STS
// allows [\w+=,.@-]{2,64}: the project's '/' becomes '+' (never in a name
// otherwise) and the parts are joined with '@' (never in a part), so a name
// of up to 64 characters reads back to one release:
//
//	coinbase/deploy-test, development, r1 -> coinbase+deploy-test@development@r1
//
// A longer name is cut to 47 characters and ends with "=" and 16 hex
// digits of the SHA-256 of the release's coordinates: "=" never occurs in
// an uncut name, so cut and uncut names never meet, and cut names differ
// unless SHA-256 collides in 64 bits. Inputs are valid names (package
// release): project "org/name" of lowercase letters, digits, '.', '_',
// '-'; config of lowercase letters, digits, '-'; release id of letters,
// digits, '-'.
func RoleSessionName(project, config, releaseID string) string {
	name := strings.ReplaceAll(project, "/", "+") + "@" + config + "@" + releaseID
	if len(name) <= MaxRoleSessionNameLen {
		return name
	}
	sum := sha256.Sum256([]byte(project + "\x00" + config + "\x00" + releaseID))
	suffix := "=" + hex.EncodeToString(sum[:8])
	return name[:MaxRoleSessionNameLen-len(suffix)] + suffix
}

// MaxSourceIdentityLen is STS's limit on a source identity.
const MaxSourceIdentityLen = 64

// SourceIdentity is the source identity the deployer sets when it assumes
// a target's roles for a release: who asked for the release, as its
// identity proof named them (callerARN and uniqueID, GetCallerIdentity's
// Arn and UserId, verified by the deployer). STS keeps a source identity
// with the session and every session chained from it, and CloudTrail
// records it with each call the session makes ("Monitor and control
// actions taken with assumed roles", IAM User Guide), so the target
// account's own trail tells whose release launched or deleted each group.
//
// STS allows [\w+=,.@-]{2,64}, never starting with "aws:" (AssumeRole,
// STS API Reference), so an ARN cannot be used as it is, and its last
// segment alone would name user/alice, assumed-role/AnyRole/alice and
// federated-user/alice alike. The name is the unique id IAM gave the
// caller ("Unique identifiers", IAM User Guide: AIDA... of a user,
// AROA...:SESSION of a role session, ACCOUNT:NAME of a federated user),
// which a principal of the same name made again does not share; without
// one (a record older than it), the ARN's whole resource. Any character STS
// does not allow is '_' (a ':' or '/' among them), then '@' and the
// account:
//
//	arn:aws:iam::111111111111:user/alice, AIDAEXAMPLE -> AIDAEXAMPLE@111111111111
//	arn:aws:sts::111111111111:assumed-role/Admin/bob, AROAEXAMPLE:bob -> AROAEXAMPLE_bob@111111111111
//
// A name too long for 64 characters is cut and ends in '=' and 8 hex
// digits of its SHA-256, so two cut names still differ. An ARN that is not
// one names nobody: "".
func SourceIdentity(callerARN, uniqueID string) string {
	parts := strings.SplitN(callerARN, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || len(parts[4]) != 12 || parts[5] == "" {
		return ""
	}
	account, resource := parts[4], parts[5]
	full := cmp.Or(uniqueID, resource)
	name := []byte(full)
	for i, c := range name {
		if !sourceIdentityChar(c) {
			name[i] = '_'
		}
	}
	if room := MaxSourceIdentityLen - len("@") - len(account); len(name) > room {
		sum := sha256.Sum256([]byte(full))
		name = append(name[:room-9], "="+hex.EncodeToString(sum[:4])...)
	}
	return string(name) + "@" + account
}

// SourceIdentityPattern matches every SourceIdentity (IAM's wildcards):
// a name, '@', a 12-digit account. The bootstrap roles' trust allows the
// deployer to set only such a source identity.
const SourceIdentityPattern = "?*@????????????"

// sourceIdentityChar reports whether STS allows c in a source identity.
func sourceIdentityChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_+=,.@-", c) >= 0
}

// WildcardMatch reports whether s matches pattern with IAM's wildcards in
// resource ARNs and condition values: * matches any run of characters
// (slashes included), ? any one character; everything else matches
// itself, case-sensitively.
func WildcardMatch(pattern, s string) bool {
	// Iterative glob matching with one backtrack point: linear in
	// practice, never exponential.
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// StateKeyPatterns are IAM resource patterns (after "<bucket ARN>/") of the
// deployer-only records: lock matches every project-config's lock, others
// every other record under StatePrefix, each by its key function with "*"
// for every part. The deployer bucket's policy lets only the deployer's
// Lambda role write or delete under StatePrefix, and an operator allowed to
// `ferry unlock` delete the locks alone.
func StateKeyPatterns() (lock string, others []string) {
	return LockKey("*", "*"), []string{
		CurrentKey("*", "*"), DriftKey("*", "*"), HealKey("*", "*"), TargetsKey("*", "*"), StartKey("*", "*", "*", "*"), TurnsPrefix("*", "*") + "*", StartedKey("*", "*", "*"), ReleaseHashKey("*", "*", "*"), UserDataKey("*", "*", "*", "*"),
		OutcomeKey("*", "*", "*"), DeployingKey("*", "*", "*"), DeletingKey("*", "*", "*"), StandbyKey("*", "*", "*"),
		AnalysisKey("*", "*", "*"), PromotionRecordKey("*", "*", "*"), VerifiedApprovalKey("*", "*", "*", "*", "*"),
	}
}

// StateMachineRoleName is the physical name of the deploy state machine's
// role in the deployer's account and region: the one principal that should
// invoke the deployer Lambda (the security help page's service control policy denies
// lambda:InvokeFunction on it to every other). It does not match
// DeployerRoleNamePattern, so the bootstrap roles do not trust it.
func StateMachineRoleName(region string) string { return "ferry-statemachine-" + region }

// ReconcileScheduleRoleName is the physical name of the role EventBridge
// Scheduler starts the reconcile passes as: it may start executions of
// the deploy state machine and nothing else. Like StateMachineRoleName it
// does not match DeployerRoleNamePattern.
func ReconcileScheduleRoleName(region string) string { return "ferry-reconcile-schedule-" + region }
