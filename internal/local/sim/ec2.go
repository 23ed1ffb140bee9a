package sim

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/limits"
)

// EC2 is the simulated EC2 API of one account-region.
type EC2 struct{ view }

var _ cloud.EC2 = (*EC2)(nil)

const serviceEC2 = "EC2"

// ec2Filter is one EC2 filter: the resource matches when one of its values
// for Name is among Values.
type ec2Filter struct {
	name   string
	values map[string]bool
}

func newEC2Filters(in []ec2types.Filter, allowed ...string) ([]ec2Filter, error) {
	var out []ec2Filter
	for _, f := range in {
		name := deref(f.Name)
		ok := strings.HasPrefix(name, "tag:") || name == "tag-key" || name == "tag-value"
		for _, a := range allowed {
			ok = ok || name == a
		}
		if !ok {
			return nil, apiErrf("InvalidParameterValue", "The filter '%s' is invalid", name)
		}
		vals := map[string]bool{}
		for _, v := range f.Values {
			vals[v] = true
		}
		out = append(out, ec2Filter{name: name, values: vals})
	}
	return out, nil
}

// matchEC2 applies filters to a resource with tags and attributes.
func matchEC2(filters []ec2Filter, tags map[string]string, attrs map[string]string) bool {
	for _, f := range filters {
		ok := false
		switch {
		case strings.HasPrefix(f.name, "tag:"):
			v, has := tags[strings.TrimPrefix(f.name, "tag:")]
			ok = has && f.values[v]
		case f.name == "tag-key":
			for k := range tags {
				ok = ok || f.values[k]
			}
		case f.name == "tag-value":
			for _, v := range tags {
				ok = ok || f.values[v]
			}
		default:
			ok = f.values[attrs[f.name]]
		}
		if !ok {
			return false
		}
	}
	return true
}

func ec2Tags(m map[string]string) []ec2types.Tag {
	out := make([]ec2types.Tag, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, ec2types.Tag{Key: aws.String(k), Value: aws.String(m[k])})
	}
	return out
}

// DescribeImages returns images by id (an unknown id is
// InvalidAMIID.NotFound) and filters (name, image-id, state, tag:K,
// tag-key, tag-value). Owners "self" or the account id match every image
// of the region.
func (c *EC2) DescribeImages(ctx context.Context, in *ec2.DescribeImagesInput, _ ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error) {
	const op = "DescribeImages"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.describeImages(in)
	return out, c.end(op, err)
}

func (r *region) describeImages(in *ec2.DescribeImagesInput) (*ec2.DescribeImagesOutput, error) {
	filters, err := newEC2Filters(in.Filters, "name", "image-id", "state", "owner-id")
	if err != nil {
		return nil, err
	}
	for _, o := range in.Owners {
		if o != "self" && o != r.account.id {
			return &ec2.DescribeImagesOutput{Images: []ec2types.Image{}}, nil
		}
	}
	ids := in.ImageIds
	for _, id := range ids {
		if !strings.HasPrefix(id, "ami-") {
			return nil, apiErrf("InvalidAMIID.Malformed", "Invalid id: \"%s\" (expecting \"ami-...\")", id)
		}
		if r.amis[id] == nil {
			return nil, apiErrf(cloud.CodeAMINotFound, "The image id '[%s]' does not exist", id)
		}
	}
	if len(ids) == 0 {
		ids = slices.Sorted(maps.Keys(r.amis))
	}
	out := &ec2.DescribeImagesOutput{Images: []ec2types.Image{}}
	for _, id := range ids {
		a := r.amis[id]
		if !matchEC2(filters, a.tags, map[string]string{"name": a.name, "image-id": a.id, "state": "available", "owner-id": r.account.id}) {
			continue
		}
		out.Images = append(out.Images, ec2types.Image{
			ImageId: aws.String(a.id), Name: aws.String(a.name), State: ec2types.ImageStateAvailable,
			OwnerId: aws.String(r.account.id), Tags: ec2Tags(a.tags), Architecture: ec2types.ArchitectureValues(a.arch),
			RootDeviceName: aws.String("/dev/sda1"), RootDeviceType: ec2types.DeviceTypeEbs,
			VirtualizationType: ec2types.VirtualizationTypeHvm, CreationDate: aws.String("2024-01-01T00:00:00.000Z"),
		})
	}
	return out, nil
}

// DescribeSubnets returns subnets by id (an unknown id is
// InvalidSubnetID.NotFound) and filters (subnet-id, vpc-id,
// availability-zone, tag:K, tag-key, tag-value).
func (c *EC2) DescribeSubnets(ctx context.Context, in *ec2.DescribeSubnetsInput, _ ...func(*ec2.Options)) (*ec2.DescribeSubnetsOutput, error) {
	const op = "DescribeSubnets"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.describeSubnets(in)
	return out, c.end(op, err)
}

func (r *region) describeSubnets(in *ec2.DescribeSubnetsInput) (*ec2.DescribeSubnetsOutput, error) {
	filters, err := newEC2Filters(in.Filters, "subnet-id", "vpc-id", "availability-zone", "state")
	if err != nil {
		return nil, err
	}
	ids := in.SubnetIds
	for _, id := range ids {
		if r.subnets[id] == nil {
			return nil, apiErrf(cloud.CodeSubnetNotFound, "The subnet ID '%s' does not exist", id)
		}
	}
	if len(ids) == 0 {
		ids = slices.Sorted(maps.Keys(r.subnets))
	}
	out := &ec2.DescribeSubnetsOutput{Subnets: []ec2types.Subnet{}}
	for _, id := range ids {
		s := r.subnets[id]
		if !matchEC2(filters, s.tags, map[string]string{"subnet-id": s.id, "vpc-id": s.vpc, "availability-zone": s.az, "state": "available"}) {
			continue
		}
		out.Subnets = append(out.Subnets, ec2types.Subnet{
			SubnetId: aws.String(s.id), VpcId: aws.String(s.vpc), AvailabilityZone: aws.String(s.az),
			State: ec2types.SubnetStateAvailable, Tags: ec2Tags(s.tags), OwnerId: aws.String(r.account.id),
			AvailableIpAddressCount: aws.Int32(4091),
		})
	}
	return out, nil
}

// DescribeSecurityGroups returns groups by id or name (an unknown one is
// InvalidGroup.NotFound) and filters (group-id, group-name, vpc-id, tag:K,
// tag-key, tag-value).
func (c *EC2) DescribeSecurityGroups(ctx context.Context, in *ec2.DescribeSecurityGroupsInput, _ ...func(*ec2.Options)) (*ec2.DescribeSecurityGroupsOutput, error) {
	const op = "DescribeSecurityGroups"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.describeSecurityGroups(in)
	return out, c.end(op, err)
}

func (r *region) describeSecurityGroups(in *ec2.DescribeSecurityGroupsInput) (*ec2.DescribeSecurityGroupsOutput, error) {
	filters, err := newEC2Filters(in.Filters, "group-id", "group-name", "vpc-id")
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, id := range in.GroupIds {
		if r.sgs[id] == nil {
			return nil, apiErrf(cloud.CodeGroupNotFound, "The security group '%s' does not exist", id)
		}
		want[id] = true
	}
	for _, n := range in.GroupNames {
		found := false
		for _, g := range r.sgs {
			if g.name == n {
				want[g.id], found = true, true
			}
		}
		if !found {
			return nil, apiErrf(cloud.CodeGroupNotFound, "The security group '%s' does not exist in default VPC", n)
		}
	}
	out := &ec2.DescribeSecurityGroupsOutput{SecurityGroups: []ec2types.SecurityGroup{}}
	for _, id := range slices.Sorted(maps.Keys(r.sgs)) {
		g := r.sgs[id]
		if len(want) > 0 && !want[id] {
			continue
		}
		if !matchEC2(filters, g.tags, map[string]string{"group-id": g.id, "group-name": g.name, "vpc-id": g.vpc}) {
			continue
		}
		out.SecurityGroups = append(out.SecurityGroups, ec2types.SecurityGroup{
			GroupId: aws.String(g.id), GroupName: aws.String(g.name), VpcId: aws.String(g.vpc),
			Tags: ec2Tags(g.tags), OwnerId: aws.String(r.account.id), Description: aws.String(g.name),
		})
	}
	return out, nil
}

var launchTemplateNameRE = regexp.MustCompile(`^[a-zA-Z0-9().\-/_]{3,128}$`)

// CreateLaunchTemplate creates a launch template (version 1). Its name is
// unique per region (InvalidLaunchTemplateName.AlreadyExistsException);
// tags on create come from TagSpecifications of type launch-template. A
// repeat with the ClientToken of an existing template returns that
// template (AWS's idempotency).
func (c *EC2) CreateLaunchTemplate(ctx context.Context, in *ec2.CreateLaunchTemplateInput, _ ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateOutput, error) {
	const op = "CreateLaunchTemplate"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.createLaunchTemplate(in)
	return out, c.end(op, err)
}

func (r *region) createLaunchTemplate(in *ec2.CreateLaunchTemplateInput) (*ec2.CreateLaunchTemplateOutput, error) {
	name := deref(in.LaunchTemplateName)
	if tok := deref(in.ClientToken); tok != "" {
		for _, lt := range r.lts {
			if lt.token == tok {
				if lt.name != name {
					return nil, apiErr("IdempotentParameterMismatch", "The client token was already used with different parameters")
				}
				return &ec2.CreateLaunchTemplateOutput{LaunchTemplate: lt.describe()}, nil
			}
		}
	}
	if !launchTemplateNameRE.MatchString(name) {
		return nil, apiErrf("InvalidLaunchTemplateName.MalformedException", "A launch template name must be between 3 and 128 characters, and may contain letters, numbers, and the following characters: - ( ) . / _.' (got %q)", name)
	}
	if r.lts[name] != nil {
		return nil, apiErrf(cloud.CodeLaunchTemplateNameAlreadyExists, "Launch template name already in use.")
	}
	if in.LaunchTemplateData == nil {
		return nil, apiErr("MissingParameter", "The request must contain the parameter LaunchTemplateData")
	}
	if len(r.lts) >= r.w.quotas.LaunchTemplates {
		return nil, apiErrf("LaunchTemplateLimitExceeded", "You've reached the maximum number of launch templates (%d)", r.w.quotas.LaunchTemplates)
	}
	data := *in.LaunchTemplateData
	if err := checkLaunchTemplateData(&data); err != nil {
		return nil, err
	}
	var tags []ec2types.Tag
	for _, ts := range in.TagSpecifications {
		if ts.ResourceType != ec2types.ResourceTypeLaunchTemplate {
			return nil, apiErrf("InvalidParameterValue", "'%s' is not a valid taggable resource type for this operation.", ts.ResourceType)
		}
		tags = append(tags, ts.Tags...)
	}
	// The id the template will get ("Grant permission to tag Amazon EC2
	// resources during creation", EC2 User Guide: tags on create need
	// ec2:CreateTags with ec2:CreateAction).
	arn := r.ec2ARN("launch-template", fmt.Sprintf("lt-%017x", r.w.ids["lt-"]+1))
	auths := []Auth{{Action: "ec2:CreateLaunchTemplate", Resource: arn, RequestTags: ec2TagMap(tags)}}
	if len(tags) > 0 {
		auths = append(auths, Auth{Action: "ec2:CreateTags", Resource: arn, RequestTags: ec2TagMap(tags),
			Context: map[string][]string{"ec2:CreateAction": {"CreateLaunchTemplate"}}})
	}
	if err := r.w.authorize(auths...); err != nil {
		return nil, err
	}
	sort.Slice(tags, func(a, b int) bool { return deref(tags[a].Key) < deref(tags[b].Key) })
	lt := &launchTemplate{
		id: r.w.newID("lt-", 17), name: name, created: r.w.now, tags: tags,
		versions: []*ec2types.RequestLaunchTemplateData{&data}, deflt: 1, token: deref(in.ClientToken),
		createdBy: "arn:aws:sts::" + r.account.id + ":assumed-role/ferry",
	}
	lt.vis = r.w.faults.visibilityOf(HideLaunchTemplates, name)
	r.lts[name] = lt
	r.ltIDs[lt.id] = lt
	return &ec2.CreateLaunchTemplateOutput{LaunchTemplate: lt.describe()}, nil
}

// checkLaunchTemplateData refuses what EC2 refuses in a launch template's
// data: user data that is not base64 or is too long, a malformed AMI id.
func checkLaunchTemplateData(data *ec2types.RequestLaunchTemplateData) error {
	if ud := deref(data.UserData); ud != "" {
		raw, err := base64.StdEncoding.DecodeString(ud)
		if err != nil {
			return apiErr("InvalidUserData.Malformed", "Invalid BASE64 encoding of user data.")
		}
		if len(raw) > limits.MaxUserDataBytes {
			return apiErrf("InvalidParameterValue", "User data is limited to %d bytes", limits.MaxUserDataBytes)
		}
	}
	if id := deref(data.ImageId); id != "" && !strings.HasPrefix(id, "ami-") {
		return apiErrf("InvalidAMIID.Malformed", "Invalid id: \"%s\" (expecting \"ami-...\")", id)
	}
	return nil
}

// CreateLaunchTemplateVersion adds a version to a template (by name or id).
// With SourceVersion the new version "inherits the launch parameters of
// the source version, except for parameters that you specify in
// LaunchTemplateData" (CreateLaunchTemplateVersion, EC2 API Reference);
// here a parameter is a top-level field of the data. The default version
// does not change. ferry never calls it: it is what someone else may do to
// a template ferry made.
func (c *EC2) CreateLaunchTemplateVersion(ctx context.Context, in *ec2.CreateLaunchTemplateVersionInput, _ ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateVersionOutput, error) {
	const op = "CreateLaunchTemplateVersion"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.createLaunchTemplateVersion(in)
	return out, c.end(op, err)
}

func (r *region) createLaunchTemplateVersion(in *ec2.CreateLaunchTemplateVersionInput) (*ec2.CreateLaunchTemplateVersionOutput, error) {
	lt, err := r.launchTemplateOf(in.LaunchTemplateName, in.LaunchTemplateId)
	if err != nil {
		return nil, err
	}
	if err := r.w.authorize(Auth{Action: "ec2:CreateLaunchTemplateVersion", Resource: r.ec2ARN("launch-template", lt.id), ResourceTags: ec2TagMap(lt.tags)}); err != nil {
		return nil, err
	}
	if in.LaunchTemplateData == nil {
		return nil, apiErr("MissingParameter", "The request must contain the parameter LaunchTemplateData")
	}
	data := *in.LaunchTemplateData
	if src := deref(in.SourceVersion); src != "" {
		n, err := strconv.ParseInt(src, 10, 64)
		if err != nil || n < 1 || n > int64(len(lt.versions)) {
			return nil, apiErrf("InvalidLaunchTemplateId.VersionNotFound", "Could not find launch template version %s for template %s", src, lt.id)
		}
		data = inherit(*lt.versions[n-1], data)
	}
	if err := checkLaunchTemplateData(&data); err != nil {
		return nil, err
	}
	lt.versions = append(lt.versions, &data)
	return &ec2.CreateLaunchTemplateVersionOutput{LaunchTemplateVersion: &ec2types.LaunchTemplateVersion{
		LaunchTemplateId: aws.String(lt.id), LaunchTemplateName: aws.String(lt.name),
		VersionNumber: aws.Int64(int64(len(lt.versions))), DefaultVersion: aws.Bool(false),
		CreateTime: aws.Time(r.w.now),
	}}, nil
}

// inherit returns src with every top-level field that over sets replaced.
func inherit(src, over ec2types.RequestLaunchTemplateData) ec2types.RequestLaunchTemplateData {
	s, o := reflect.ValueOf(&src).Elem(), reflect.ValueOf(over)
	for i := range o.NumField() {
		if f := o.Field(i); s.Type().Field(i).IsExported() && !f.IsZero() {
			s.Field(i).Set(f)
		}
	}
	return src
}

// ModifyLaunchTemplate sets a template's default version.
func (c *EC2) ModifyLaunchTemplate(ctx context.Context, in *ec2.ModifyLaunchTemplateInput, _ ...func(*ec2.Options)) (*ec2.ModifyLaunchTemplateOutput, error) {
	const op = "ModifyLaunchTemplate"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.modifyLaunchTemplate(in)
	return out, c.end(op, err)
}

func (r *region) modifyLaunchTemplate(in *ec2.ModifyLaunchTemplateInput) (*ec2.ModifyLaunchTemplateOutput, error) {
	lt, err := r.launchTemplateOf(in.LaunchTemplateName, in.LaunchTemplateId)
	if err != nil {
		return nil, err
	}
	if err := r.w.authorize(Auth{Action: "ec2:ModifyLaunchTemplate", Resource: r.ec2ARN("launch-template", lt.id), ResourceTags: ec2TagMap(lt.tags)}); err != nil {
		return nil, err
	}
	if v := deref(in.DefaultVersion); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > int64(len(lt.versions)) {
			return nil, apiErrf("InvalidLaunchTemplateId.VersionNotFound", "Could not find launch template version %s for template %s", v, lt.id)
		}
		lt.deflt = n
	}
	return &ec2.ModifyLaunchTemplateOutput{LaunchTemplate: lt.describe()}, nil
}

// launchTemplateOf finds a visible template by name or id.
func (r *region) launchTemplateOf(name, id *string) (*launchTemplate, error) {
	var lt *launchTemplate
	switch {
	case id != nil:
		lt = r.ltIDs[*id]
		if lt == nil || !r.ltVisible(lt) {
			return nil, apiErrf("InvalidLaunchTemplateId.NotFound", "The specified launch template, with template ID %s, does not exist.", *id)
		}
	case name != nil:
		lt = r.lts[*name]
		if lt == nil || !r.ltVisible(lt) {
			return nil, apiErrf("InvalidLaunchTemplateName.NotFoundException", "The specified launch template, with template name %s, does not exist.", *name)
		}
	default:
		return nil, apiErr("MissingParameter", "The request must contain the parameter LaunchTemplateName or LaunchTemplateId")
	}
	return lt, nil
}

func (lt *launchTemplate) describe() *ec2types.LaunchTemplate {
	return &ec2types.LaunchTemplate{
		LaunchTemplateId: aws.String(lt.id), LaunchTemplateName: aws.String(lt.name),
		CreateTime: aws.Time(lt.created), CreatedBy: aws.String(lt.createdBy),
		DefaultVersionNumber: aws.Int64(lt.deflt), LatestVersionNumber: aws.Int64(int64(len(lt.versions))),
		Tags: append([]ec2types.Tag(nil), lt.tags...),
	}
}

// DescribeLaunchTemplates returns templates by name or id (an unknown one
// is InvalidLaunchTemplateName.NotFoundException or
// InvalidLaunchTemplateId.NotFound) or by filters (launch-template-name,
// tag:K, tag-key, tag-value), sorted by name, paginated by MaxResults
// (5-200) and NextToken.
func (c *EC2) DescribeLaunchTemplates(ctx context.Context, in *ec2.DescribeLaunchTemplatesInput, _ ...func(*ec2.Options)) (*ec2.DescribeLaunchTemplatesOutput, error) {
	const op = "DescribeLaunchTemplates"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.describeLaunchTemplates(in)
	return out, c.end(op, err)
}

func (r *region) describeLaunchTemplates(in *ec2.DescribeLaunchTemplatesInput) (*ec2.DescribeLaunchTemplatesOutput, error) {
	filters, err := newEC2Filters(in.Filters, "launch-template-name")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range in.LaunchTemplateNames {
		if lt := r.lts[n]; lt == nil || !r.ltVisible(lt) {
			return nil, apiErr(cloud.CodeLaunchTemplateNameNotFound, "At least one of the launch templates specified in the request does not exist.")
		}
		names = append(names, n)
	}
	for _, id := range in.LaunchTemplateIds {
		lt := r.ltIDs[id]
		if lt == nil || !r.ltVisible(lt) {
			return nil, apiErrf(cloud.CodeLaunchTemplateIDNotFound, "The specified launch template, with template ID %s, does not exist.", id)
		}
		names = append(names, lt.name)
	}
	explicit := len(names) > 0
	if explicit {
		slices.Sort(names)
		names = slices.Compact(names)
	} else {
		names = slices.Sorted(maps.Keys(r.lts))
	}
	limit := int(deref(in.MaxResults))
	if limit == 0 {
		limit = 200
	}
	if limit < 1 || limit > 200 {
		return nil, apiErr("InvalidParameterValue", "MaxResults must be between 1 and 200")
	}
	start, ok := pageStart(names, deref(in.NextToken))
	if !ok {
		return nil, apiErr("InvalidNextToken", "The specified token is invalid")
	}
	out := &ec2.DescribeLaunchTemplatesOutput{LaunchTemplates: []ec2types.LaunchTemplate{}}
	for _, n := range names[start:] {
		lt := r.lts[n]
		tags := map[string]string{}
		for _, t := range lt.tags {
			tags[deref(t.Key)] = deref(t.Value)
		}
		if !matchEC2(filters, tags, map[string]string{"launch-template-name": lt.name}) || (!explicit && !r.ltVisible(lt)) {
			continue
		}
		if len(out.LaunchTemplates) == limit {
			out.NextToken = pageToken(*out.LaunchTemplates[limit-1].LaunchTemplateName)
			break
		}
		out.LaunchTemplates = append(out.LaunchTemplates, *lt.describe())
	}
	return out, nil
}

// DeleteLaunchTemplate deletes a template by name or id (an unknown one is
// a not-found error). A template in use by a group may be deleted, as in
// AWS.
func (c *EC2) DeleteLaunchTemplate(ctx context.Context, in *ec2.DeleteLaunchTemplateInput, _ ...func(*ec2.Options)) (*ec2.DeleteLaunchTemplateOutput, error) {
	const op = "DeleteLaunchTemplate"
	r, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	out, err := r.deleteLaunchTemplate(in)
	return out, c.end(op, err)
}

func (r *region) deleteLaunchTemplate(in *ec2.DeleteLaunchTemplateInput) (*ec2.DeleteLaunchTemplateOutput, error) {
	var lt *launchTemplate
	switch {
	case in.LaunchTemplateId != nil:
		if lt = r.ltIDs[*in.LaunchTemplateId]; lt == nil || !r.ltVisible(lt) {
			return nil, apiErrf(cloud.CodeLaunchTemplateIDNotFound, "The specified launch template, with template ID %s, does not exist.", *in.LaunchTemplateId)
		}
	case in.LaunchTemplateName != nil:
		if lt = r.lts[*in.LaunchTemplateName]; lt == nil || !r.ltVisible(lt) {
			return nil, apiErrf(cloud.CodeLaunchTemplateNameNotFound, "The specified launch template, with template name %s, does not exist.", *in.LaunchTemplateName)
		}
	default:
		return nil, apiErr("MissingParameter", "The request must contain the parameter LaunchTemplateName or LaunchTemplateId")
	}
	if err := r.w.authorize(Auth{Action: "ec2:DeleteLaunchTemplate", Resource: r.ec2ARN("launch-template", lt.id), ResourceTags: ec2TagMap(lt.tags)}); err != nil {
		return nil, err
	}
	delete(r.lts, lt.name)
	delete(r.ltIDs, lt.id)
	r.deletedLTs = append(r.deletedLTs, lt)
	return &ec2.DeleteLaunchTemplateOutput{LaunchTemplate: lt.describe()}, nil
}
