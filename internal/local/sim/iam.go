package sim

import (
	"context"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/ferryhq/ferry/internal/cloud"
)

// IAM is the simulated IAM API of one account (IAM is global; the region
// of the view does not matter).
type IAM struct{ view }

// SNS is the simulated SNS API of one account-region.
type SNS struct{ view }

var (
	_ cloud.IAM = (*IAM)(nil)
	_ cloud.SNS = (*SNS)(nil)
)

const (
	serviceIAM = "IAM"
	serviceSNS = "SNS"
)

// parseRoleARN splits arn:aws:iam::<account>:role/<path/><name>.
func parseRoleARN(arn string) (accountID, name string, ok bool) {
	rest, found := strings.CutPrefix(arn, "arn:aws:iam::")
	if !found {
		return "", "", false
	}
	accountID, res, found := strings.Cut(rest, ":")
	if !found || !accountRE.MatchString(accountID) {
		return "", "", false
	}
	res, found = strings.CutPrefix(res, "role/")
	if !found || res == "" {
		return "", "", false
	}
	return accountID, res[strings.LastIndex(res, "/")+1:], true
}

func (a *account) roleType(r *role) iamtypes.Role {
	var statements []string
	for _, t := range slices.Sorted(maps.Keys(r.trust)) {
		statements = append(statements, `{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::`+t+`:root"},"Action":"sts:AssumeRole"}`)
	}
	for _, s := range slices.Sorted(maps.Keys(r.services)) {
		statements = append(statements, `{"Effect":"Allow","Principal":{"Service":"`+s+`"},"Action":"sts:AssumeRole"}`)
	}
	doc := `{"Version":"2012-10-17","Statement":[` + strings.Join(statements, ",") + "]}"
	return iamtypes.Role{
		RoleName: aws.String(r.name), RoleId: aws.String(r.id), Path: aws.String(r.path),
		Arn: aws.String("arn:aws:iam::" + a.id + ":role" + r.path + r.name), CreateDate: aws.Time(r.created),
		AssumeRolePolicyDocument: aws.String(url.QueryEscape(doc)), MaxSessionDuration: aws.Int32(3600),
	}
}

// GetInstanceProfile returns an instance profile with its path and roles;
// an unknown name is NoSuchEntity.
func (c *IAM) GetInstanceProfile(ctx context.Context, in *iam.GetInstanceProfileInput, _ ...func(*iam.Options)) (*iam.GetInstanceProfileOutput, error) {
	const op = "GetInstanceProfile"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	a := r.account
	ip := a.profiles[deref(in.InstanceProfileName)]
	if ip != nil {
		_ = r.w.authorize(Auth{Action: "iam:GetInstanceProfile", Resource: "arn:aws:iam::" + a.id + ":instance-profile" + ip.path + ip.name})
	}
	if ip == nil {
		return nil, c.end(op, apiErrf(cloud.CodeNoSuchEntity, "Instance Profile %s cannot be found.", deref(in.InstanceProfileName)))
	}
	out := &iamtypes.InstanceProfile{
		InstanceProfileName: aws.String(ip.name), InstanceProfileId: aws.String(ip.id), Path: aws.String(ip.path),
		Arn: aws.String("arn:aws:iam::" + a.id + ":instance-profile" + ip.path + ip.name), CreateDate: aws.Time(ip.created),
		Roles: []iamtypes.Role{},
	}
	for _, rn := range ip.roles {
		if role := a.roles[rn]; role != nil {
			out.Roles = append(out.Roles, a.roleType(role))
		}
	}
	return &iam.GetInstanceProfileOutput{InstanceProfile: out}, c.end(op, nil)
}

// GetRole returns a role; an unknown name is NoSuchEntity.
func (c *IAM) GetRole(ctx context.Context, in *iam.GetRoleInput, _ ...func(*iam.Options)) (*iam.GetRoleOutput, error) {
	const op = "GetRole"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	role := r.account.roles[deref(in.RoleName)]
	if role != nil {
		_ = r.w.authorize(Auth{Action: "iam:GetRole", Resource: r.roleARN(role)})
	}
	if role == nil {
		return nil, c.end(op, apiErrf(cloud.CodeNoSuchEntity, "The role with name %s cannot be found.", deref(in.RoleName)))
	}
	out := r.account.roleType(role)
	return &iam.GetRoleOutput{Role: &out}, c.end(op, nil)
}

// GetTopicAttributes returns a topic's attributes; an unknown ARN is
// NotFound.
func (c *SNS) GetTopicAttributes(ctx context.Context, in *sns.GetTopicAttributesInput, _ ...func(*sns.Options)) (*sns.GetTopicAttributesOutput, error) {
	const op = "GetTopicAttributes"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	arn := deref(in.TopicArn)
	_ = r.w.authorize(Auth{Action: "sns:GetTopicAttributes", Resource: arn})
	t, ok := r.topics[arn]
	if !ok {
		return nil, c.end(op, apiErr(cloud.CodeNotFound, "Topic does not exist"))
	}
	return &sns.GetTopicAttributesOutput{Attributes: map[string]string{
		"TopicArn": arn, "Owner": r.account.id, "DisplayName": t.name,
		"SubscriptionsConfirmed": "0", "SubscriptionsPending": "0", "SubscriptionsDeleted": "0",
	}}, c.end(op, nil)
}

// ListTagsForResource returns a topic's tags; an unknown ARN is
// ResourceNotFound.
func (c *SNS) ListTagsForResource(ctx context.Context, in *sns.ListTagsForResourceInput, _ ...func(*sns.Options)) (*sns.ListTagsForResourceOutput, error) {
	const op = "ListTagsForResource"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	_ = r.w.authorize(Auth{Action: "sns:ListTagsForResource", Resource: deref(in.ResourceArn)})
	t, ok := r.topics[deref(in.ResourceArn)]
	if !ok {
		return nil, c.end(op, apiErr(cloud.CodeResourceNotFound, "Resource does not exist"))
	}
	out := &sns.ListTagsForResourceOutput{Tags: []snstypes.Tag{}}
	for _, k := range slices.Sorted(maps.Keys(t.tags)) {
		out.Tags = append(out.Tags, snstypes.Tag{Key: aws.String(k), Value: aws.String(t.tags[k])})
	}
	return out, c.end(op, nil)
}
