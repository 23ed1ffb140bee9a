package naming

import (
	"cmp"
	"strconv"
	"strings"
	"time"
)

// Tag names. ProjectName, ConfigName and ServiceName scope a resource to one
// project-config-service; DeployWith opts a resource in to ferry; ReleaseID
// marks what a release created.
const (
	TagProjectName = "ProjectName"
	TagConfigName  = "ConfigName"
	TagServiceName = "ServiceName"
	TagReleaseID   = "ReleaseID"
	TagDeployWith  = "DeployWith"
	TagName        = "Name"
	// TagDeployProjects, on an image or a subnet that opts in with
	// DeployWith, restricts it to some projects (see ProjectListed);
	// without it, any project may use it.
	TagDeployProjects = "DeployProjects"

	// DeployWithValue is the value of the DeployWith tag on every resource
	// ferry may use or manage.
	DeployWithValue = "ferry"
)

// ProjectListed reports whether a DeployProjects tag value lists project:
// the value is a space-separated list of entries, each a project
// ("coinbase/deploy-test") or an organization's prefix ending in '/'
// ("coinbase/"), since tag values cannot hold '*'. An empty value lists no
// project.
func ProjectListed(value, project string) bool {
	for _, entry := range strings.Fields(value) {
		if entry == project || (strings.HasSuffix(entry, "/") && strings.HasPrefix(project, entry)) {
			return true
		}
	}
	return false
}

// ReservedTags are the tag keys ferry sets itself; a service's own tags may
// not use them.
func ReservedTags() []string {
	return []string{TagProjectName, TagConfigName, TagServiceName, TagReleaseID, TagDeployWith, TagName}
}

// Deployer bucket key layout. What clients write (releases, assets, halt
// markers) lives under Prefix(project, config), so an S3 policy on that
// prefix controls who can deploy or halt a project-config. What only the
// deployer writes lives under StatePrefix (StateConfigPrefix(project,
// config)), which the deployer bucket's policy closes to everyone but the
// deployer: a client that may write its project's prefix can neither forge
// a record nor take, move or drop a lock.
//
//	<project>/<config>/halt                                 a halt marker
//	<project>/<config>/<release_id>/release.json            the release as uploaded
//	<project>/<config>/assets/<sha256>                      content-addressed assets
//	<project>/<config>/_pipeline.json                       the pipeline registered for the config
//	<project>/<config>/_promotions/<id>/request.json        a promotion's request (under its first stage's config)
//	<project>/_promotions/<config>/<id>/approval.json       a person's approval of the promotion into the stage <config>
//	<project>/<config>/_promotions/<id>/halt                a promotion's halt marker
//	_state/<project>/<config>/lock                          the project-config lock
//	_state/_starts/<account>/<region>/<stamp>-<execution>   a deploy's start in a target environment, read by the deploys starting beside it (empty; expires in a day)
//	_state/_turns/<account>/<region>/<stamp>-20-<execution>   a Deploy round's or retirement step's turn at a target environment's Auto Scaling calls, read by those taking theirs beside it (empty; expires in a day)
//	_state/<project>/<config>/current                       what is deployed now
//	_state/<project>/<config>/drift                         what the last drift query saw, each difference with since when
//	_state/<project>/<config>/heal                          the reconciler's heals: of which release, how many in a row, when last
//	_state/<project>/<config>/targets                       every environment the config has deployed to and may have groups in, written before anything is made in a new one
//	_state/<project>/<config>/_promotions/<id>.json         a promotion's record (under its first stage's config)
//	_state/<project>/<config>/_promotions/turns/<id>.json   the claim of the turn after promotion <id> (or "none"), once
//	_state/<project>/<config>/_promotions/approvals/<id>/<stage>/<sha256>.json  the deployer verified the approval of that sum when it was given, once
//	_state/<project>/<config>/<release_id>/started          run-once marker, written when an execution first sees the release
//	_state/<project>/<config>/<release_id>/release.sha256   the canonical hash of the release Validate accepted, which every reader checks release.json against
//	_state/<project>/<config>/<release_id>/userdata/<service>  rendered user data
//	_state/<project>/<config>/<release_id>/outcome.json     how the execution ended
//	_state/<project>/<config>/<release_id>/deploying        the groups Deploy may create, written before it creates any
//	_state/<project>/<config>/<release_id>/standby          the previous groups Bake stands by, each with what it was attached to, written before it detaches any
//	_state/<project>/<config>/<release_id>/analysis.json    the last judgement of the release's canary analysis
//	_state/<project>/<config>/<release_id>/deleting         the previous groups CleanUpSuccess retires, written before it deletes any
//
// A target environment's asset bucket holds published assets, each under
// the project-config that published it, so that the deploy that holds a
// project-config's lock is the only writer of its prefix and may collect
// it (asset.Collect); keys assets/<sha256>, with no project-config, are
// the layout before it, which nothing writes or deletes any more:
//
//	assets/<project>/<config>/<sha256>               a published asset
func Prefix(project, config string) string { return project + "/" + config + "/" }

// StatePrefix is the prefix of every deployer-only record. A project's
// first segment starts with a lowercase letter or digit, so no project's
// prefix is under it.
const StatePrefix = "_state/"

// StateConfigPrefix is the prefix of the deployer-only records of a
// project-config.
func StateConfigPrefix(project, config string) string { return StatePrefix + Prefix(project, config) }

// stateReleasePrefix is the prefix of the deployer-only records of one
// release.
func stateReleasePrefix(project, config, releaseID string) string {
	return StateConfigPrefix(project, config) + releaseID + "/"
}

// ProjectPrefix is the prefix of every key of a project; the configs of a
// project are the next path segment under it.
func ProjectPrefix(project string) string { return project + "/" }

// StartsRoot is the prefix of every start marker (StartKey). "_starts"
// is no project name (StatePrefix), so no project-config's records are
// under it.
const StartsRoot = StatePrefix + "_starts/"

// StartsPrefix is the prefix of the start markers of the deploys to one
// target account and region (StartKey).
func StartsPrefix(account, region string) string { return StartsRoot + account + "/" + region + "/" }

// StartKey is the start marker of a deploy to a target account and
// region, named by its execution (ExecutionName: unique, of [A-Za-z0-9_-])
// and stamped (StartStamp) with when the execution started: the keys of
// one target sort by start.
func StartKey(account, region, stamp, execution string) string {
	return StartsPrefix(account, region) + stamp + "-" + execution
}

// StartStamp is t as a StartKey stamps it: UTC to the millisecond, fixed
// width, so that stamps sort as times do.
func StartStamp(t time.Time) string { return t.UTC().Format(startStampLayout) }

// StartOf returns the start and the execution of a key StartKey made
// under prefix; ok is false for any other key.
func StartOf(prefix, key string) (at time.Time, execution string, ok bool) {
	rest, found := strings.CutPrefix(key, prefix)
	if !found || len(rest) < len(startStampLayout)+2 || rest[len(startStampLayout)] != '-' {
		return time.Time{}, "", false
	}
	at, err := time.Parse(startStampLayout, rest[:len(startStampLayout)])
	if err != nil {
		return time.Time{}, "", false
	}
	return at, rest[len(startStampLayout)+1:], true
}

const startStampLayout = "20060102T150405.000Z"

// TurnsRoot is the prefix of every turn of a round of Deploy or a step
// of a retirement (TurnKey). "_turns" is no project name (StatePrefix),
// so no project-config's records are under it.
const TurnsRoot = StatePrefix + "_turns/"

// TurnsPrefix is the prefix of the turns taken in one target account
// and region (TurnKey).
func TurnsPrefix(account, region string) string { return TurnsRoot + account + "/" + region + "/" }

// TurnKey is the turn a round or step of execution (ExecutionName:
// unique, of [A-Za-z0-9_-]) takes in a target account and region: when
// it begins, stamped as StartStamp stamps, and the most Auto Scaling
// calls it makes (calls). The keys of one target sort by when their
// turns begin.
func TurnKey(account, region, stamp string, calls int, execution string) string {
	return TurnsPrefix(account, region) + stamp + "-" + strconv.Itoa(calls) + "-" + execution
}

// TurnOf returns when the turn a key TurnKey made under prefix begins,
// its calls and its execution; ok is false for any other key.
func TurnOf(prefix, key string) (at time.Time, calls int, execution string, ok bool) {
	at, rest, ok := StartOf(prefix, key)
	if !ok {
		return time.Time{}, 0, "", false
	}
	n, execution, found := strings.Cut(rest, "-")
	calls, err := strconv.Atoi(n)
	if !found || err != nil || calls < 0 || execution == "" || n != strconv.Itoa(calls) {
		return time.Time{}, 0, "", false
	}
	return at, calls, execution, true
}

// LockKey is the key of a project-config's lock.
func LockKey(project, config string) string { return StateConfigPrefix(project, config) + "lock" }

// HaltKey is the key of a project-config's halt marker.
func HaltKey(project, config string) string { return Prefix(project, config) + "halt" }

// CurrentKey is the key of the record of what is deployed now.
func CurrentKey(project, config string) string { return StateConfigPrefix(project, config) + "current" }

// DriftKey is the key of the record of what the last drift query saw in
// a project-config: each difference with when it was first seen.
func DriftKey(project, config string) string { return StateConfigPrefix(project, config) + "drift" }

// PipelineKey is the key of the pipeline registered for a
// project-config: a promotion deploys the config only through it, so
// whoever may write the config's prefix decides which pipeline may
// deploy it, and with which gates.
func PipelineKey(project, config string) string { return Prefix(project, config) + "_pipeline.json" }

// PromotionPrefix is the prefix of a promotion's client objects under one
// of its stages' configs: the request (under the first stage's), an
// approval, a halt marker. A release id starts with a letter or digit,
// so no release's prefix is under it.
func PromotionPrefix(project, config, promotionID string) string {
	return Prefix(project, config) + "_promotions/" + promotionID + "/"
}

// PromotionRequestKey is the key of a promotion's request, under its
// first stage's config.
func PromotionRequestKey(project, firstConfig, promotionID string) string {
	return PromotionPrefix(project, firstConfig, promotionID) + "request.json"
}

// ApprovalKey is the key of a person's approval of a promotion into the
// stage whose config_name is stage: under the project's PromotionsSegment,
// which is no config name, so a stage's name (which need not be a target's
// config) never shows as a config of the project. (Approvals were kept
// under <project>/<stage>/_promotions/<id>/ before: one written there
// is not read; a stage waiting for it is approved again.)
func ApprovalKey(project, stage, promotionID string) string {
	return ProjectPrefix(project) + PromotionsSegment + "/" + stage + "/" + promotionID + "/approval.json"
}

// PromotionsSegment is the path segment, in a config's place under a
// project's prefix, of the promotion objects that belong to no config
// (ApprovalKey). It begins with "_", as no config name does: listings of
// a project's configs leave it out (IsConfigSegment).
const PromotionsSegment = "_promotions"

// IsConfigSegment reports whether seg, a path segment in a config's
// place under a project's prefix, may name a config: any but those that
// begin with "_" (PromotionsSegment), as no config name does.
func IsConfigSegment(seg string) bool { return !strings.HasPrefix(seg, "_") }

// PromotionHaltKey is the key of a promotion's halt marker, under any of
// its stages' configs.
func PromotionHaltKey(project, config, promotionID string) string {
	return PromotionPrefix(project, config, promotionID) + "halt"
}

// PromotionRecordKey is the key of the deployer's record of a promotion,
// under its first stage's config.
func PromotionRecordKey(project, firstConfig, promotionID string) string {
	return StateConfigPrefix(project, firstConfig) + "_promotions/" + promotionID + ".json"
}

// PromotionRecordPrefix is the prefix of every promotion record whose
// first stage is config.
func PromotionRecordPrefix(project, firstConfig string) string {
	return StateConfigPrefix(project, firstConfig) + "_promotions/"
}

// PromotionTurnKey is the key of the claim of the turn after promotion
// after (NoPromotion: before any) among the promotions whose first stage
// is config: written once (If-None-Match: *) by the one promotion that
// runs next, so two promotions of a pipeline never run at once. It
// matches PromotionRecordKey's pattern, and holds no ".json" id of
// Promotions' listing.
func PromotionTurnKey(project, firstConfig, after string) string {
	return PromotionRecordPrefix(project, firstConfig) + "turns/" + cmp.Or(after, NoPromotion) + ".json"
}

// VerifiedApprovalKey is the key of the deployer's record that it
// verified, when it was given (ferry pipeline approve's query), the
// approval of the promotion into stage whose bytes have the hex SHA-256
// sum, under the promotion's first config, written once. It is under
// StatePrefix, so a client that may write approvals (ApprovalKey) cannot
// forge one; and it counts only with the approval of that sum stored at
// ApprovalKey, which whoever may approve the stage writes, so a caller
// who may only start a query cannot approve. The gate counts the two
// without the approval's identity proof, which expires. It matches
// PromotionRecordKey's pattern, and holds no ".json" id of Promotions'
// listing.
func VerifiedApprovalKey(project, firstConfig, promotionID, stage, sum string) string {
	return PromotionRecordPrefix(project, firstConfig) + "approvals/" + promotionID + "/" + stage + "/" + sum + ".json"
}

// NoPromotion names, in PromotionTurnKey, the turn before any promotion.
const NoPromotion = "none"

// PromotionExecutionName is the name of a promotion's execution.
func PromotionExecutionName(project, firstConfig, promotionID string) string {
	return ExecutionName(project, firstConfig, promotionID+"-promotion")
}

// TargetsKey is the key of the record of every target environment a
// project-config has deployed to and may still have groups in.
func TargetsKey(project, config string) string { return StateConfigPrefix(project, config) + "targets" }

// HealKey is the key of the record of the reconciler's heals of a
// project-config: which release it healed, how often, when last.
func HealKey(project, config string) string { return StateConfigPrefix(project, config) + "heal" }

// ReleasePrefix is the prefix of everything stored for one release.
func ReleasePrefix(project, config, releaseID string) string {
	return Prefix(project, config) + releaseID + "/"
}

// ReleaseKey is the key of the release as the client uploaded it.
func ReleaseKey(project, config, releaseID string) string {
	return ReleasePrefix(project, config, releaseID) + "release.json"
}

// StartedKey is the key of the run-once marker of a release.
func StartedKey(project, config, releaseID string) string {
	return stateReleasePrefix(project, config, releaseID) + "started"
}

// ReleaseHashKey is the key of the record of a release's canonical hash
// (release.Hash) as Validate accepted it: release.json is checked against
// it by every reader that acts on or shows the release's content.
func ReleaseHashKey(project, config, releaseID string) string {
	return stateReleasePrefix(project, config, releaseID) + "release.sha256"
}

// UserDataKey is the key of a service's rendered user data.
func UserDataKey(project, config, releaseID, service string) string {
	return stateReleasePrefix(project, config, releaseID) + "userdata/" + service
}

// OutcomeKey is the key of the record of how a release's execution ended.
func OutcomeKey(project, config, releaseID string) string {
	return stateReleasePrefix(project, config, releaseID) + "outcome.json"
}

// DeployingKey is the key of the record Deploy writes before it creates
// anything: the groups (and launch templates) it may create, so
// CleanUpFailure deletes them by name even when AWS does not show them
// yet.
func DeployingKey(project, config, releaseID string) string {
	return stateReleasePrefix(project, config, releaseID) + "deploying"
}

// StandbyKey is the key of the record Bake writes before it takes the
// previous groups out of their load balancers, naming each with what it
// was attached to: a rollback puts exactly them back.
func StandbyKey(project, config, releaseID string) string {
	return stateReleasePrefix(project, config, releaseID) + "standby"
}

// AnalysisKey is the key of the record of a release's last canary
// analysis (every judgement replaces it): what its outcome keeps.
func AnalysisKey(project, config, releaseID string) string {
	return stateReleasePrefix(project, config, releaseID) + "analysis.json"
}

// DeletingKey is the key of the record CleanUpSuccess writes before it
// deletes the first previous group, naming exactly the groups it retires:
// from then on the release is past its point of no return.
func DeletingKey(project, config, releaseID string) string {
	return stateReleasePrefix(project, config, releaseID) + "deleting"
}

// AssetKey is the key of an asset in the deployer bucket, by the hex SHA-256
// of its content.
func AssetKey(project, config, sha256 string) string {
	return Prefix(project, config) + "assets/" + sha256
}

// AssetPrefix is the prefix of a project-config's assets in the deployer
// bucket (AssetKey).
func AssetPrefix(project, config string) string { return AssetKey(project, config, "") }

// TargetAssetKey is the key of an asset of project/config in a target
// environment's asset bucket.
func TargetAssetKey(project, config, sha256 string) string {
	return TargetAssetPrefix(project, config) + sha256
}

// TargetAssetPrefix is the prefix of the assets of project/config in a
// target environment's asset bucket (TargetAssetKey).
func TargetAssetPrefix(project, config string) string { return "assets/" + Prefix(project, config) }

// TargetAssetResource is the pattern, after the asset bucket's ARN and
// "/", of the objects a publish role session may write and delete: its
// own project-config's assets (TargetAssetKey with the session's tags).
// The bootstrap template's policy and the IAM checks are made from it.
const TargetAssetResource = "assets/" + PolicyVarProject + "/" + PolicyVarConfig + "/*"

// Environment names. Bootstrap resources have conventional physical names
// built from account, region and an optional qualifier, so a release names
// its target without looking anything up (the CDK bootstrap convention).

func qualified(q string) string {
	if q == "" {
		return "ferry"
	}
	return "ferry-" + q
}

// DeployRoleName is the role the deployer assumes to deploy into a target.
func DeployRoleName(account, region, qualifier string) string {
	return qualified(qualifier) + "-deploy-" + account + "-" + region
}

// PublishRoleName is the role the deployer assumes to publish assets.
func PublishRoleName(account, region, qualifier string) string {
	return qualified(qualifier) + "-publish-" + account + "-" + region
}

// AssetBucketName is the bucket that holds a target environment's assets.
func AssetBucketName(account, region, qualifier string) string {
	return qualified(qualifier) + "-assets-" + account + "-" + region
}

// DeployerBucketName is the deployer's own bucket.
func DeployerBucketName(account, region string) string {
	return "ferry-deployer-" + account + "-" + region
}

// RoleARN is the ARN of a role by name in an account (partition aws).
func RoleARN(account, roleName string) string {
	return "arn:aws:iam::" + account + ":role/" + roleName
}

// ProjectConfigPath is the IAM path of a project-config: a lifecycle
// hook's role must be under it (the hook serves every group of the
// project-config).
func ProjectConfigPath(project, config string) string { return "/" + project + "/" + config + "/" }

// InstanceProfilePath is the IAM path an instance profile, and each role
// in it, must have to be used by a service.
func InstanceProfilePath(project, config, service string) string {
	return ProjectConfigPath(project, config) + service + "/"
}

// GroupName is the deterministic name of the ASG (and its launch template)
// of one service of one release, so a retry finds what it made.
func GroupName(project, config, service, releaseID string) string {
	return strings.Join([]string{project, config, service, releaseID}, "/")
}

// AlarmName is the name of the CloudWatch alarm of one scaling policy of a
// group.
func AlarmName(group, policyType string) string { return group + "/" + policyType }

// PolicyName is the name of one scaling policy of a group.
func PolicyName(policyType string) string { return policyType }
