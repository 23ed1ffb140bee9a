package resources

import (
	"context"
	"encoding/json"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/naming/tags"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/tuning"
)

// checkProfiles checks that each instance profile exists and that its path,
// and the path of each of its roles, is the using service's
// /<project>/<config>/<service>/. One GetInstanceProfile per distinct
// profile.
func checkProfiles(ctx context.Context, api cloud.IAM, r *release.Release, profiles map[string][]string, p *problems) error {
	names := slices.Sorted(maps.Keys(profiles))
	outs := make([]*iam.GetInstanceProfileOutput, len(names))
	errs := make([]error, len(names))
	// The reads side by side (tuning.ProfileParallel at a time), their
	// findings in the profiles' order: a release of fifty services waits
	// two reads' time, not fifty, before its groups are created.
	_ = fanout.Each(ctx, tuning.ProfileParallel, len(names), func(ctx context.Context, i int) error {
		outs[i], errs[i] = api.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(names[i])})
		return nil
	})
	for i, name := range names {
		out, err := outs[i], errs[i]
		if cloud.IsNotFoundCode(err, cloud.CodeNoSuchEntity) {
			for _, svc := range profiles[name] {
				p.add("services."+svc+".profile", "instance profile %q not found", name)
			}
			continue
		}
		if err != nil {
			return cloud.Classify("iam:GetInstanceProfile", err)
		}
		path := ""
		var roles []iamtypes.Role
		if out.InstanceProfile != nil {
			path = aws.ToString(out.InstanceProfile.Path)
			roles = out.InstanceProfile.Roles
		}
		for _, svc := range profiles[name] {
			want := naming.InstanceProfilePath(r.ProjectName, r.ConfigName, svc)
			if path != want {
				p.add("services."+svc+".profile", "instance profile %q has path %q, not %q", name, path, want)
			}
			// The role is what the instances act as: its path scopes it to
			// the service too (the design's rule).
			for _, role := range roles {
				if rp := aws.ToString(role.Path); rp != want {
					p.add("services."+svc+".profile", "role %q of instance profile %q has path %q, not %q", aws.ToString(role.RoleName), name, rp, want)
				}
			}
		}
	}
	return nil
}

// checkHooks checks the role and topic of every lifecycle hook, and
// returns their ARNs. The role must exist, be under the project-config's
// path (/<project>/<config>/, naming.ProjectConfigPath: the hook serves
// every group of the project-config, and the deploy role passes only
// roles under a path) and trust Auto Scaling (naming.HookRoleTrust), which
// assumes it to publish the hook's notifications; the topic must exist
// and carry the project-config's ProjectName and ConfigName tags. One
// GetRole per distinct role, one GetTopicAttributes and
// ListTagsForResource per distinct topic, the roles' and the topics'
// side by side.
func checkHooks(ctx context.Context, c *cloud.Clients, r *release.Release, p *problems) (roles, topics map[string]string, err error) {
	// Each distinct role and topic once, in the hooks' order, their
	// reads side by side: they read nothing of each other's.
	type check struct {
		path, ref string
		topic     bool
	}
	var checks []check
	checked := map[string]bool{}
	for _, n := range slices.Sorted(maps.Keys(r.Lifecycle)) {
		h := r.Lifecycle[n]
		if h == nil {
			continue
		}
		path := "lifecycle." + n
		if !checked["role "+h.Role] {
			checked["role "+h.Role] = true
			checks = append(checks, check{path: path + ".role", ref: h.Role})
		}
		if !checked["topic "+h.SNS] {
			checked["topic "+h.SNS] = true
			checks = append(checks, check{path: path + ".sns", ref: h.SNS, topic: true})
		}
	}
	arns := make([]string, len(checks))
	parts := make([]func(ctx context.Context, p *problems) error, len(checks))
	for i, ch := range checks {
		parts[i] = func(ctx context.Context, p *problems) error {
			var err error
			if ch.topic {
				arns[i], err = checkHookTopic(ctx, c, r, ch.path, ch.ref, p)
			} else {
				arns[i], err = checkHookRole(ctx, c.IAM, r, ch.path, ch.ref, p)
			}
			return err
		}
	}
	if err := sideBySide(ctx, p, parts...); err != nil {
		return nil, nil, err
	}
	roles, topics = map[string]string{}, map[string]string{}
	for i, ch := range checks {
		switch {
		case arns[i] == "":
		case ch.topic:
			topics[ch.ref] = arns[i]
		default:
			roles[ch.ref] = arns[i]
		}
	}
	return roles, topics, nil
}

// checkHookRole checks a lifecycle hook's role (see checkHooks) and
// returns its ARN ("" when it is not usable).
func checkHookRole(ctx context.Context, api cloud.IAM, r *release.Release, path, ref string, p *problems) (string, error) {
	out, err := api.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(naming.RoleNameOf(ref))})
	switch {
	case cloud.IsNotFoundCode(err, cloud.CodeNoSuchEntity):
		p.add(path, "role %q not found", ref)
		return "", nil
	case err != nil:
		return "", cloud.Classify("iam:GetRole", err)
	case out.Role == nil:
		p.add(path, "role %q not found", ref)
		return "", nil
	}
	ok := true
	if want, got := naming.ProjectConfigPath(r.ProjectName, r.ConfigName), aws.ToString(out.Role.Path); !strings.HasPrefix(got, want) {
		p.add(path, "role %q has path %q, not one under %q: a hook's role serves every group of the project-config", ref, got, want)
		ok = false
	}
	if !trusts(aws.ToString(out.Role.AssumeRolePolicyDocument), naming.HookRoleTrust) {
		p.add(path, "role %q does not trust %s, which assumes it to publish the hook's notifications", ref, naming.HookRoleTrust)
		ok = false
	}
	if !ok {
		return "", nil
	}
	return aws.ToString(out.Role.Arn), nil
}

// checkHookTopic checks a lifecycle hook's topic (see checkHooks) and
// returns its ARN ("" when it is not usable).
func checkHookTopic(ctx context.Context, c *cloud.Clients, r *release.Release, path, ref string, p *problems) (string, error) {
	arn := naming.TopicARN(c.Target.Region, c.Target.AccountID, ref)
	_, err := c.SNS.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String(arn)})
	switch {
	case cloud.IsNotFoundCode(err):
		p.add(path, "topic %q not found", ref)
		return "", nil
	case err != nil:
		return "", cloud.Classify("sns:GetTopicAttributes", err)
	}
	out, err := c.SNS.ListTagsForResource(ctx, &sns.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
	if err != nil {
		return "", cloud.Classify("sns:ListTagsForResource", err)
	}
	topicTags := tags.FromSNS(out.Tags)
	ok := true
	for _, w := range [][2]string{{naming.TagProjectName, r.ProjectName}, {naming.TagConfigName, r.ConfigName}} {
		if topicTags[w[0]] != w[1] {
			p.add(path, "topic %q is tagged %s=%q, not %q", ref, w[0], topicTags[w[0]], w[1])
			ok = false
		}
	}
	if !ok {
		return "", nil
	}
	return arn, nil
}

// trusts reports whether an IAM role's trust policy (the
// AssumeRolePolicyDocument GetRole returns, URL-encoded JSON) allows the
// service principal to assume it: a statement with Effect Allow, an
// Action of sts:AssumeRole (or sts:*, or *), and the service among its
// Service principals. A policy that does not parse trusts nobody.
func trusts(document, service string) bool {
	raw, err := url.QueryUnescape(document)
	if err != nil {
		return false
	}
	var doc struct {
		Statement json.RawMessage
	}
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		return false
	}
	type statement struct {
		Effect    string
		Action    json.RawMessage
		Principal json.RawMessage
	}
	var statements []statement
	if err := json.Unmarshal(doc.Statement, &statements); err != nil {
		var one statement
		if err := json.Unmarshal(doc.Statement, &one); err != nil {
			return false
		}
		statements = []statement{one}
	}
	for _, s := range statements {
		var principal struct {
			Service json.RawMessage
		}
		if s.Effect != "Allow" || json.Unmarshal(s.Principal, &principal) != nil {
			continue
		}
		if slices.ContainsFunc(stringOrList(s.Action), func(a string) bool {
			return strings.EqualFold(a, "sts:AssumeRole") || a == "sts:*" || a == "*"
		}) && slices.Contains(stringOrList(principal.Service), service) {
			return true
		}
	}
	return false
}

// stringOrList reads an IAM policy element that is a string or a list of
// strings.
func stringOrList(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var list []string
	_ = json.Unmarshal(raw, &list) // anything else is no value
	return list
}
