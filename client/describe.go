package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// describeRelease is the line deploy prints under a release's id: its
// version and description, "" when it gives neither.
func describeRelease(r *release.Release) string {
	d := oneLine(r.Description)
	switch {
	case r.Version == "" && d == "":
		return ""
	case r.Version == "":
		return "  " + d
	case d == "":
		return "  version " + r.Version
	}
	return "  version " + r.Version + ": " + d
}

// deployerVersion names the deployer build that recorded a release, ""
// for records written before deployers said.
func deployerVersion(v string) string {
	if v == "" {
		return ""
	}
	return "deployer " + v
}

// currentRows are status's rows of what is deployed: the release, who
// deployed it with which deployer, its version and description, and the
// environment it runs in; with nothing deployed, the destroy that left
// it so (destroyed, nil when none).
func currentRows(tw io.Writer, c *ledger.Current, destroyed *releaseStatus) {
	switch {
	case c == nil && destroyed != nil:
		row(tw, "  deployed", "nothing: destroyed by release "+destroyed.ReleaseID, formatTime(destroyed.EndedAt), byWhom(destroyed.CreatedBy, destroyed.CreatedByName))
		return
	case c == nil:
		row(tw, "  deployed", "nothing yet")
		return
	}
	row(tw, "  deployed", c.ReleaseID, formatTime(c.DeployedAt), byWhom(c.CreatedBy, c.CreatedByName), deployerVersion(c.DeployerVersion))
	if c.ReleaseVersion != "" || c.Description != "" {
		row(tw, "  release", firstNonEmpty(c.ReleaseVersion, "(no version)"), oneLine(c.Description))
	}
	if c.AccountID != "" || c.Region != "" {
		row(tw, "  target", "account "+firstNonEmpty(c.AccountID, "?"), "region "+firstNonEmpty(c.Region, "?"))
	}
}

// writeGroups lists the current release's groups, a line per service:
// its group, AMI id and desired instance count (what the group was
// settled to after the deploy; scaling policies may have moved it since).
func writeGroups(w io.Writer, c *ledger.Current) {
	if c == nil || len(c.Groups) == 0 {
		return
	}
	fmt.Fprintln(w, "  services (desired instances, as deployed)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, g := range c.Groups {
		row(tw, "    "+g.Service, g.Group, firstNonEmpty(g.ImageID, "(image unknown)"), fmt.Sprintf("desired %d", g.Desired))
	}
	tw.Flush()
}

// nameGroups says, once a deploy succeeded, which groups it created and
// which it retired, from the execution's output (the state document
// CleanUpSuccess returned). It only informs: an output that cannot be
// read says nothing.
func nameGroups(ctx context.Context, d *deployer, out *display, arn string) {
	created, retired := groupsOf(ctx, d, arn)
	for _, g := range created {
		out.message("created group %s", g)
	}
	for _, g := range retired {
		out.message("retired group %s", g)
	}
}

// groupsOf are the groups the succeeded execution arn created and
// retired, from its output (the state document CleanUpSuccess returned);
// none when it cannot be read.
func groupsOf(ctx context.Context, d *deployer, arn string) (created, retired []string) {
	desc, err := d.sfn.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		return nil, nil
	}
	return groupsIn(aws.ToString(desc.Output))
}

// groupsIn are the groups a succeeded execution with output created and
// retired.
func groupsIn(output string) (created, retired []string) {
	var st execution.State
	if err := json.Unmarshal([]byte(output), &st); err != nil || st.ReleaseID == "" {
		return nil, nil
	}
	for _, svc := range st.Services {
		created = append(created, naming.GroupName(st.ProjectName, st.ConfigName, svc, st.ReleaseID))
	}
	return created, st.Retired
}
