package release

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/ferryhq/ferry/internal/limits"
)

// The shapes of names and references. Each is anchored and ASCII-only, and
// is shared by the validator and the JSON Schema.
const (
	projectSegmentPattern = `[a-z0-9][a-z0-9._-]*`
	projectPattern        = `^` + projectSegmentPattern + `/` + projectSegmentPattern + `$`
	simpleNamePattern     = `^[a-z0-9][a-z0-9-]*$`
	releaseIDPattern      = `^[A-Za-z0-9][A-Za-z0-9-]*$`
	accountIDPattern      = `^[0-9]{12}$`
	regionPattern         = `^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`
	qualifierPattern      = `^[a-z0-9]{1,10}$`
	instanceTypePattern   = `^[a-z][a-z0-9-]*\.[a-z0-9-]+$`
	// refPattern is what a resource reference (a Name tag or an ID) may
	// hold: the characters AWS allows in security group names, which
	// include the ':' and '/' of names like ec2::org/name::config. No
	// leading or trailing space.
	refPattern = `^[A-Za-z0-9._:/()#,@\[\]+=&;{}!$*-]([A-Za-z0-9 ._:/()#,@\[\]+=&;{}!$*-]*[A-Za-z0-9._:/()#,@\[\]+=&;{}!$*-])?$`
	// elbPattern is a classic load balancer name.
	elbPattern = `^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?$`
	// iamNamePattern is an IAM role or instance profile name.
	iamNamePattern = `^[A-Za-z0-9+=,.@_-]+$`
	// snsTopicPattern is an SNS topic name.
	snsTopicPattern = `^[A-Za-z0-9_-]+(\.fifo)?$`
	// hookNamePattern names a lifecycle hook.
	hookNamePattern = `^[A-Za-z0-9][A-Za-z0-9_-]*$`
	// assetNamePattern names an asset, as written in {{ASSET_URL:name}}.
	assetNamePattern = `^[A-Za-z0-9][A-Za-z0-9._-]*$`
	// tagPattern is what a tag key or value may hold (AWS's tag character
	// set, ASCII only).
	tagPattern        = `^[A-Za-z0-9 +=._:/@-]*$`
	sha256Pattern     = `^[0-9a-f]{64}$`
	deviceNamePattern = `^/dev/(sd|xvd)[a-z]([1-9][0-9]?)?$`
	// headerPattern is an identity proof's header name or value: printable
	// ASCII, as HTTP wants, without leading or trailing space.
	headerPattern  = `^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$`
	versionPattern = `^[A-Za-z0-9][A-Za-z0-9._+-]*$`
	// descriptionPattern is the description's rule: no control characters but newline and tab (in the syntax ECMA-262 and RE2 share).
	descriptionPattern = `^[^\x00-\x08\x0b-\x1f\x7f-\x9f]*$`
)

// Lengths not in package limits because they are AWS's, not ferry's.
const (
	maxELBLen       = 32
	maxIAMNameLen   = 128
	maxRoleNameLen  = 64
	maxSNSTopicLen  = 256
	maxHookNameLen  = 64
	maxAssetNameLen = 64
	maxAssetPathLen = 1024
	// maxBucketNameLen is S3's longest bucket name (Amazon S3 User Guide,
	// general purpose bucket naming rules: 3 to 63 characters).
	maxBucketNameLen = 63
)

var (
	projectRe      = regexp.MustCompile(projectPattern)
	simpleNameRe   = regexp.MustCompile(simpleNamePattern)
	releaseIDRe    = regexp.MustCompile(releaseIDPattern)
	accountIDRe    = regexp.MustCompile(accountIDPattern)
	regionRe       = regexp.MustCompile(regionPattern)
	qualifierRe    = regexp.MustCompile(qualifierPattern)
	instanceTypeRe = regexp.MustCompile(instanceTypePattern)
	refRe          = regexp.MustCompile(refPattern)
	elbRe          = regexp.MustCompile(elbPattern)
	iamNameRe      = regexp.MustCompile(iamNamePattern)
	snsTopicRe     = regexp.MustCompile(snsTopicPattern)
	hookNameRe     = regexp.MustCompile(hookNamePattern)
	assetNameRe    = regexp.MustCompile(assetNamePattern)
	tagRe          = regexp.MustCompile(tagPattern)
	sha256Re       = regexp.MustCompile(sha256Pattern)
	deviceNameRe   = regexp.MustCompile(deviceNamePattern)
	headerRe       = regexp.MustCompile(headerPattern)
	versionRe      = regexp.MustCompile(versionPattern)
	descriptionRe  = regexp.MustCompile(descriptionPattern)
)

// checkProject returns why s is not a safe project name, or "".
func checkProject(s string) string {
	switch {
	case s == "":
		return "required"
	case len(s) > limits.MaxProjectLen:
		return fmt.Sprintf("must be at most %d characters", limits.MaxProjectLen)
	case strings.Count(s, "/") != 1:
		return `must be "org/name" with exactly one '/'`
	case strings.Contains(s, ".."):
		return `must not contain ".."`
	case !projectRe.MatchString(s):
		return `must be "org/name", each part lowercase letters, digits, '.', '_' and '-', starting with a letter or digit`
	}
	return ""
}

// checkSimple returns why s is not a safe config or service name, or "".
func checkSimple(s string, max int) string {
	switch {
	case s == "":
		return "required"
	case len(s) > max:
		return fmt.Sprintf("must be at most %d characters", max)
	case !simpleNameRe.MatchString(s):
		return "must be lowercase letters, digits and '-', starting with a letter or digit"
	}
	return ""
}

// checkReleaseID returns why s is not a valid release id, or "".
func checkReleaseID(s string) string {
	switch {
	case s == "":
		return "required"
	case len(s) > limits.MaxReleaseIDLen:
		return fmt.Sprintf("must be at most %d characters", limits.MaxReleaseIDLen)
	case !releaseIDRe.MatchString(s):
		return "must be letters, digits and '-', starting with a letter or digit"
	}
	return ""
}

// ValidateProjectName returns nil when name is a safe project name
// ("org/name"), else an error saying why.
func ValidateProjectName(name string) error { return nameErr("project name", name, checkProject(name)) }

// ValidateConfigName returns nil when name is a safe config name, else an
// error saying why.
func ValidateConfigName(name string) error {
	return nameErr("config name", name, checkSimple(name, limits.MaxConfigLen))
}

// ValidateServiceName returns nil when name is a safe service name, else an
// error saying why.
func ValidateServiceName(name string) error {
	return nameErr("service name", name, checkSimple(name, limits.MaxServiceLen))
}

// ValidateReleaseID returns nil when id is a valid release id, else an
// error saying why.
func ValidateReleaseID(id string) error { return nameErr("release id", id, checkReleaseID(id)) }

func nameErr(what, value, why string) error {
	if why == "" {
		return nil
	}
	return fmt.Errorf("%s %q: %s", what, value, why)
}
