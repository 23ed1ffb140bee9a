package fleet

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/naming/tags"
)

// Owner is a project-config: what ferry manages for it carries its
// ProjectName and ConfigName tags and DeployWith=ferry.
type Owner struct {
	Project, Config string
}

// Marks reports whether tags mark a resource ferry manages for the
// project-config (of any release).
func (o Owner) Marks(tags map[string]string) bool {
	return tags[naming.TagProjectName] == o.Project && tags[naming.TagConfigName] == o.Config &&
		tags[naming.TagDeployWith] == naming.DeployWithValue
}

// Deleting reports whether an Auto Scaling group is being deleted: its
// Status, which AWS sets only while DeleteAutoScalingGroup is in progress
// ("Delete in progress"; AutoScalingGroup, Auto Scaling API Reference),
// the one field that says so.
func Deleting(g asgtypes.AutoScalingGroup) bool { return deleting(aws.ToString(g.Status)) }

// deleting says whether a group's Status is that of a group being
// deleted.
func deleting(status string) bool { return strings.HasPrefix(status, "Delete") }

// ReleaseOf is the release a group of ferry's belongs to (its ReleaseID
// tag).
func ReleaseOf(g asgtypes.AutoScalingGroup) string { return tags.FromASG(g.Tags)[naming.TagReleaseID] }

// Groups returns every Auto Scaling group of the project-config ferry
// manages, found by its tags (filters, re-checked on every group here),
// every page, each with its instances. Groups being deleted are included
// (see Deleting). A failure is classified (cloud.Classify).
func Groups(ctx context.Context, api cloud.AutoScaling, o Owner) ([]asgtypes.AutoScalingGroup, error) {
	return list(ctx, api, o, true)
}

// List is Groups without their instances (IncludeInstances false): each
// group summarized, for a caller that names, records or retires groups
// and counts none of their instances. At 50 groups of 100 instances,
// their instances are nearly all of a listing's bytes.
func List(ctx context.Context, api cloud.AutoScaling, o Owner) ([]Summary, error) {
	groups, err := Heads(ctx, api, o)
	if err != nil {
		return nil, err
	}
	return Summaries(groups), nil
}

// Heads is Groups without their instances (IncludeInstances false), each
// group as AWS describes it: for a caller that reads groups' names,
// tags, capacities and attachments, and counts none of their instances
// (a Retirer's Headless step). A group so described shows no instance
// whether it has any or not.
func Heads(ctx context.Context, api cloud.AutoScaling, o Owner) ([]asgtypes.AutoScalingGroup, error) {
	return list(ctx, api, o, false)
}

// list pages through the project-config's groups, with their instances
// or without (IncludeInstances), limits.DescribeGroupsBatch a page (the
// largest MaxRecords; AWS's default is 50, DescribeAutoScalingGroups,
// Auto Scaling API Reference): a deploy's previous and new groups of 50
// services are one call, one token of the account's Auto Scaling bucket,
// not two.
func list(ctx context.Context, api cloud.AutoScaling, o Owner, instances bool) ([]asgtypes.AutoScalingGroup, error) {
	in := &autoscaling.DescribeAutoScalingGroupsInput{IncludeInstances: aws.Bool(instances), MaxRecords: aws.Int32(limits.DescribeGroupsBatch), Filters: []asgtypes.Filter{
		{Name: aws.String("tag:" + naming.TagProjectName), Values: []string{o.Project}},
		{Name: aws.String("tag:" + naming.TagConfigName), Values: []string{o.Config}},
		{Name: aws.String("tag:" + naming.TagDeployWith), Values: []string{naming.DeployWithValue}},
	}}
	var groups []asgtypes.AutoScalingGroup
	for {
		out, err := api.DescribeAutoScalingGroups(ctx, in)
		if err != nil {
			return nil, cloud.Classify("autoscaling:DescribeAutoScalingGroups", err)
		}
		for _, g := range out.AutoScalingGroups {
			if o.Marks(tags.FromASG(g.Tags)) {
				groups = append(groups, g)
			}
		}
		if aws.ToString(out.NextToken) == "" {
			return groups, nil
		}
		in.NextToken = out.NextToken
	}
}

// Describe describes Auto Scaling groups by name, in batches of
// limits.DescribeGroupsBatch (each with MaxRecords as large: "By default,
// you can only specify up to 50 names. You can optionally increase this
// limit using the MaxRecords property", DescribeAutoScalingGroups, Auto
// Scaling API Reference), and returns those AWS shows, by name. A name
// missing from the result does not exist, or is not visible yet. A
// failure is classified (cloud.Classify).
func Describe(ctx context.Context, api cloud.AutoScaling, names []string) (map[string]asgtypes.AutoScalingGroup, error) {
	return DescribeKnown(ctx, api, names, nil)
}

// DescribeKnown is Describe of names, those known already describes (as
// a describe or a listing moments before showed them, for a caller that
// needed them too) taken from it: only the others are asked for, none
// when known has every name. On an account's one shared Auto Scaling
// request bucket (Amazon EC2 Auto Scaling API Reference, API request
// rate), a describe less is a token more for everyone's deploys. A name
// known does not show is asked for: it may be visible by name.
func DescribeKnown(ctx context.Context, api cloud.AutoScaling, names []string, known map[string]asgtypes.AutoScalingGroup) (map[string]asgtypes.AutoScalingGroup, error) {
	return describe(ctx, api, names, known, true)
}

// DescribeHeads is DescribeKnown without the groups' instances
// (IncludeInstances false; see Heads): those known (described so
// moments before) are not asked for again.
func DescribeHeads(ctx context.Context, api cloud.AutoScaling, names []string, known map[string]asgtypes.AutoScalingGroup) (map[string]asgtypes.AutoScalingGroup, error) {
	return describe(ctx, api, names, known, false)
}

// DescribeSummaries is DescribeKnown without the groups' instances
// (IncludeInstances false), each group summarized: those known
// (summaries moments before) are not asked for again.
func DescribeSummaries(ctx context.Context, api cloud.AutoScaling, names []string, known []Summary) (map[string]Summary, error) {
	var ask []string
	out := map[string]Summary{}
	for _, name := range names {
		if i := slices.IndexFunc(known, func(s Summary) bool { return s.Name == name }); i >= 0 {
			out[name] = known[i]
		} else {
			ask = append(ask, name)
		}
	}
	groups, err := describe(ctx, api, ask, nil, false)
	if err != nil {
		return nil, err
	}
	for name, g := range groups {
		out[name] = Summarize(g)
	}
	return out, nil
}

// describe is DescribeKnown, with the groups' instances or without
// (IncludeInstances).
func describe(ctx context.Context, api cloud.AutoScaling, names []string, known map[string]asgtypes.AutoScalingGroup, instances bool) (map[string]asgtypes.AutoScalingGroup, error) {
	out := map[string]asgtypes.AutoScalingGroup{}
	var ask []string
	for _, name := range names {
		if g, ok := known[name]; ok {
			out[name] = g
		} else if !slices.Contains(ask, name) {
			ask = append(ask, name)
		}
	}
	for batch := range slices.Chunk(ask, limits.DescribeGroupsBatch) {
		in := &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: batch, MaxRecords: aws.Int32(limits.DescribeGroupsBatch), IncludeInstances: aws.Bool(instances)}
		for {
			page, err := api.DescribeAutoScalingGroups(ctx, in)
			if err != nil {
				return nil, cloud.Classify("autoscaling:DescribeAutoScalingGroups", err)
			}
			for _, g := range page.AutoScalingGroups {
				out[aws.ToString(g.AutoScalingGroupName)] = g
			}
			if aws.ToString(page.NextToken) == "" {
				break
			}
			in.NextToken = page.NextToken
		}
	}
	return out, nil
}

// ByName is groups (a listing: Groups) by name.
func ByName(groups []asgtypes.AutoScalingGroup) map[string]asgtypes.AutoScalingGroup {
	out := make(map[string]asgtypes.AutoScalingGroup, len(groups))
	for _, g := range groups {
		out[aws.ToString(g.AutoScalingGroupName)] = g
	}
	return out
}

// Templates returns the launch templates of the project-config ferry
// manages, by name, with their tags (tag filters, re-checked here), every
// page. A failure is classified (cloud.Classify).
func Templates(ctx context.Context, api cloud.EC2, o Owner) (map[string]map[string]string, error) {
	return templates(ctx, api, o, &ec2.DescribeLaunchTemplatesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + naming.TagProjectName), Values: []string{o.Project}},
		{Name: aws.String("tag:" + naming.TagConfigName), Values: []string{o.Config}},
		{Name: aws.String("tag:" + naming.TagDeployWith), Values: []string{naming.DeployWithValue}},
	}})
}

// templatesNamed returns the launch templates of the given names that AWS
// shows, by name, with their tags, whoever's they are (a name filter, so
// a missing name is no error).
func templatesNamed(ctx context.Context, api cloud.EC2, names []string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for batch := range slices.Chunk(names, limits.DescribeTemplatesBatch) {
		page, err := templates(ctx, api, Owner{}, &ec2.DescribeLaunchTemplatesInput{Filters: []ec2types.Filter{
			{Name: aws.String("launch-template-name"), Values: batch},
		}})
		if err != nil {
			return nil, err
		}
		for name, tags := range page {
			out[name] = tags
		}
	}
	return out, nil
}

// templates pages through a DescribeLaunchTemplates; with an Owner it
// keeps only the owner's.
func templates(ctx context.Context, api cloud.EC2, o Owner, in *ec2.DescribeLaunchTemplatesInput) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for {
		page, err := api.DescribeLaunchTemplates(ctx, in)
		if err != nil {
			return nil, cloud.Classify("ec2:DescribeLaunchTemplates", err)
		}
		for _, lt := range page.LaunchTemplates {
			if t := tags.FromEC2(lt.Tags); o == (Owner{}) || o.Marks(t) {
				out[aws.ToString(lt.LaunchTemplateName)] = t
			}
		}
		if aws.ToString(page.NextToken) == "" {
			return out, nil
		}
		in.NextToken = page.NextToken
	}
}

// Alarms returns the alarms ferry named after the given groups, by group:
// the project-config's alarms whose name is naming.AlarmName(group, ...)
// and whose AutoScalingGroupName dimension is that group (one describe by
// the project-config's prefix, every page). A failure is classified.
func Alarms(ctx context.Context, api cloud.CloudWatch, o Owner, groups []string) (map[string][]string, error) {
	want := map[string]bool{}
	for _, g := range groups {
		want[g] = true
	}
	in := &cloudwatch.DescribeAlarmsInput{AlarmNamePrefix: aws.String(naming.GroupPrefix(o.Project, o.Config))}
	out := map[string][]string{}
	for {
		page, err := api.DescribeAlarms(ctx, in)
		if err != nil {
			return nil, cloud.Classify("cloudwatch:DescribeAlarms", err)
		}
		for _, a := range page.MetricAlarms {
			alarm := aws.ToString(a.AlarmName)
			for _, dim := range a.Dimensions {
				group := aws.ToString(dim.Value)
				if aws.ToString(dim.Name) == "AutoScalingGroupName" && want[group] && strings.HasPrefix(alarm, naming.AlarmName(group, "")) {
					out[group] = append(out[group], alarm)
				}
			}
		}
		if aws.ToString(page.NextToken) == "" {
			return out, nil
		}
		in.NextToken = page.NextToken
	}
}

// Previous returns, by service (its ServiceName tag), the groups of the
// project-config that releases other than releaseID made and that are not
// being deleted (Groups): a service's previous group, or, when it has
// more than one, every one of them.
func Previous(ctx context.Context, api cloud.AutoScaling, o Owner, releaseID string) (map[string][]asgtypes.AutoScalingGroup, error) {
	groups, err := Groups(ctx, api, o)
	if err != nil {
		return nil, err
	}
	return PreviousIn(groups, releaseID), nil
}

// PreviousIn is Previous of groups, the project-config's as Groups listed
// them.
func PreviousIn(groups []asgtypes.AutoScalingGroup, releaseID string) map[string][]asgtypes.AutoScalingGroup {
	byService := map[string][]asgtypes.AutoScalingGroup{}
	for _, g := range groups {
		t := tags.FromASG(g.Tags)
		if t[naming.TagReleaseID] == releaseID || Deleting(g) {
			continue
		}
		svc := t[naming.TagServiceName]
		byService[svc] = append(byService[svc], g)
	}
	return byService
}

// Of are the names of the groups and launch templates (Groups, Templates)
// release releaseID made, sorted.
func Of(releaseID string, groups []asgtypes.AutoScalingGroup, templates map[string]map[string]string) []string {
	var mine []string
	for _, g := range groups {
		if ReleaseOf(g) == releaseID {
			mine = append(mine, aws.ToString(g.AutoScalingGroupName))
		}
	}
	return names(mine, templates, func(t map[string]string) bool { return t[naming.TagReleaseID] == releaseID })
}

// Others are the names of the groups not being deleted, and of the launch
// templates (Groups, Templates), that releases other than releaseID made,
// sorted: what a swap to releaseID retires (a template whose group is
// gone is an orphan to remove too).
func Others(releaseID string, groups []Summary, templates map[string]map[string]string) []string {
	var out []string
	for _, g := range groups {
		if g.Release() != releaseID && !g.Deleting() {
			out = append(out, g.Name)
		}
	}
	return names(out, templates, func(t map[string]string) bool { return t[naming.TagReleaseID] != releaseID })
}

// names are groups, with the names of the templates template takes,
// sorted, once each.
func names(groups []string, templates map[string]map[string]string, template func(map[string]string) bool) []string {
	out := slices.Clone(groups)
	for name, t := range templates {
		if template(t) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Activities is what a group's scaling activities say.
type Activities struct {
	// Terminated counts the instances of the group that terminated.
	Terminated int
	// Rebalanced are the instances Capacity Rebalancing terminated (after
	// launching their replacement), by id: not in Terminated.
	Rebalanced map[string]bool
	// Failed is the StatusMessage of a failed launch that will fail again
	// ("" when none).
	Failed string
	// Latest is when the group's newest activity started (zero when it
	// has none): ActivitySince it tells whether any began since.
	Latest time.Time
}

// terminatingPrefix begins the Description of the scaling activity that
// terminates an instance ("Terminating EC2 instance: i-..."). An activity
// carries no field that says what it does: its Description, Cause and
// StatusMessage are text (Activity, Auto Scaling API Reference), so the
// Description is read.
const terminatingPrefix = "Terminating EC2 instance"

// rebalanceCause is in the Cause of an activity of Capacity Rebalancing
// ("... in response to an EC2 instance rebalance recommendation",
// "Capacity Rebalancing", Auto Scaling User Guide): it terminates a Spot
// instance at risk once its replacement is in service. An interruption
// without it shows as any instance EC2 stopped ("in response to an EC2
// health check indicating it has been terminated or stopped") and is a
// termination like any other.
const rebalanceCause = "EC2 instance rebalance recommendation"

// ActivitiesPerCall is how many scaling activities ReadActivities reads a
// call: DescribeScalingActivities's largest MaxRecords (Auto Scaling API
// Reference).
const ActivitiesPerCall = 100

// ReadActivities reads the scaling activities of the group name, every
// page (at most a few per instance the group ever had). A failed launch
// that is a capacity shortage (cloud.IsCapacityShortage) is Auto
// Scaling's to retry and is not reported. A failure is a
// *failure.RetryableError when transient, else a *failure.DeployError.
func ReadActivities(ctx context.Context, api cloud.AutoScaling, name string) (Activities, error) {
	in := &autoscaling.DescribeScalingActivitiesInput{AutoScalingGroupName: aws.String(name), MaxRecords: aws.Int32(ActivitiesPerCall)}
	var out Activities
	for {
		page, err := api.DescribeScalingActivities(ctx, in)
		if err != nil {
			return Activities{}, deployErr("autoscaling:DescribeScalingActivities "+name, err)
		}
		for _, a := range page.Activities {
			if start := aws.ToTime(a.StartTime); start.After(out.Latest) {
				out.Latest = start
			}
			switch {
			case strings.HasPrefix(aws.ToString(a.Description), terminatingPrefix) && strings.Contains(aws.ToString(a.Cause), rebalanceCause):
				if out.Rebalanced == nil {
					out.Rebalanced = map[string]bool{}
				}
				out.Rebalanced[strings.TrimSpace(strings.TrimPrefix(aws.ToString(a.Description), terminatingPrefix+":"))] = true
			case strings.HasPrefix(aws.ToString(a.Description), terminatingPrefix):
				out.Terminated++
			case (a.StatusCode == asgtypes.ScalingActivityStatusCodeFailed || a.StatusCode == asgtypes.ScalingActivityStatusCodeCancelled) &&
				out.Failed == "" && !cloud.IsCapacityShortage(aws.ToString(a.StatusMessage)):
				out.Failed = aws.ToString(a.StatusMessage)
			}
		}
		if aws.ToString(page.NextToken) == "" {
			return out, nil
		}
		in.NextToken = page.NextToken
	}
}

// ActivitySince reports whether the group name has a scaling activity in
// progress, or one that started after at (the Latest of an earlier
// ReadActivities): one call of one record. Auto Scaling describes a
// group's activities in progress first, then by start time, newest first
// ("Activities are sorted by start time. Activities still in progress are
// described first", DescribeScalingActivities, Auto Scaling API
// Reference). When it is false the group launched and terminated nothing
// since that read, whose counts stand. A failure is classified as
// ReadActivities's.
func ActivitySince(ctx context.Context, api cloud.AutoScaling, name string, at time.Time) (bool, error) {
	page, err := api.DescribeScalingActivities(ctx, &autoscaling.DescribeScalingActivitiesInput{AutoScalingGroupName: aws.String(name), MaxRecords: aws.Int32(1)})
	if err != nil {
		return false, deployErr("autoscaling:DescribeScalingActivities "+name, err)
	}
	if len(page.Activities) == 0 {
		return false, nil
	}
	a := page.Activities[0]
	switch a.StatusCode {
	case asgtypes.ScalingActivityStatusCodeSuccessful, asgtypes.ScalingActivityStatusCodeFailed, asgtypes.ScalingActivityStatusCodeCancelled:
		return aws.ToTime(a.StartTime).After(at), nil
	}
	return true, nil
}
