package chaos

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// TestClearlyWorse: a release under analysis is clearly worse only when
// its build passes every build the config's groups run by more than
// three tolerances on a judged metric, and the world lets that be told.
func TestClearlyWorse(t *testing.T) {
	images := imagesOf(sim.WorldSpec{Accounts: []sim.AccountSpec{{Regions: []sim.RegionSpec{{AMIs: []sim.AMISpec{
		{ID: "ami-1", Name: "ubuntu", Metrics: []sim.MetricSpec{{Namespace: "Shop", Name: "Latency", Value: 100}, {Namespace: "Shop", Name: "Errors", Value: 1}}},
		{ID: "ami-2", Name: "ubuntu-slower", Metrics: []sim.MetricSpec{{Namespace: "Shop", Name: "Latency", Value: 160}, {Namespace: "Shop", Name: "Errors", Value: 1}}},
		{ID: "ami-3", Name: "ubuntu-little-slower", Metrics: []sim.MetricSpec{{Namespace: "Shop", Name: "Latency", Value: 125}, {Namespace: "Shop", Name: "Errors", Value: 1}}},
	}}}}}})
	group := func(service, lt string, instances int) sim.GroupSnapshot {
		return sim.GroupSnapshot{Name: lt, LaunchTemplate: lt, Instances: make([]sim.InstanceSnapshot, instances),
			Tags: map[string]string{naming.TagDeployWith: "ferry", naming.TagProjectName: project, naming.TagConfigName: config, naming.TagServiceName: service}}
	}
	snap := func(groups ...sim.GroupSnapshot) sim.Snapshot {
		return sim.Snapshot{Accounts: []sim.AccountSnapshot{{Account: account, Region: awsRegion, Groups: groups,
			LaunchTemplates: []sim.LaunchTemplateSnapshot{{Name: "old", ImageID: "ami-1"}, {Name: "slow", ImageID: "ami-2"}}}}}
	}
	rel := func(ami string, analysis bool) *release.Release {
		r := &release.Release{ProjectName: project, ConfigName: config, AMI: ami, Services: map[string]*release.Service{"web": {}}}
		r.Analysis = analysed(analysis)
		return r
	}
	tests := []struct {
		name  string
		rel   *release.Release
		snap  sim.Snapshot
		worse bool
	}{
		{"60% slower than the build serving", rel("ubuntu-slower", true), snap(group("web", "old", 2)), true},
		{"no analysis", rel("ubuntu-slower", false), snap(group("web", "old", 2)), false},
		{"within three tolerances", rel("ubuntu-little-slower", true), snap(group("web", "old", 2)), false},
		{"the same build", rel("ubuntu", true), snap(group("web", "old", 2)), false},
		{"a group already runs it", rel("ubuntu-slower", true), snap(group("web", "old", 2), group("worker", "slow", 1)), false},
		{"nothing to compare with", rel("ubuntu-slower", true), snap(group("worker", "old", 1)), false},
		{"a group without instances", rel("ubuntu-slower", true), snap(group("web", "old", 0)), false},
		{"a group whose image is not known", rel("ubuntu-slower", true), snap(group("web", "gone", 2)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why := clearlyWorse(tt.rel, tt.snap, images)
			assert.Equal(t, tt.worse, why != "", why)
		})
	}
}

// TestAnalysedBuilds plays a slower and an erring build on the local
// region, under a canary analysis and without: under analysis each is
// rolled back (the analysis predicate judged it, nothing broken); without,
// the same build succeeds (the world serves it: nothing else stops it).
func TestAnalysedBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("plays four scenarios")
	}
	for _, tt := range []struct {
		build    string
		analysis bool
		end      string
	}{
		{BuildSlower, true, execution.EndFailureClean},
		{BuildErrs, true, execution.EndFailureClean},
		{BuildSlower, false, execution.EndSuccess},
		{"", true, execution.EndSuccess},
	} {
		t.Run(tt.build+map[bool]string{true: " analysed", false: ""}[tt.analysis], func(t *testing.T) {
			sc := Scenario{Seed: 1, Steps: []Step{{At: 0, Kind: KindDeploy, R: &Variant{Build: tt.build, Analysis: tt.analysis, Version: 1}}}}
			res, err := Run(context.Background(), "../../..", sc)
			require.NoError(t, err)
			assert.Empty(t, res.Violations)
			require.Len(t, res.Ends, 1)
			for _, end := range res.Ends {
				assert.Equal(t, tt.end, end)
			}
			assert.Equal(t, tt.analysis && tt.build != "", res.Worse == 1, "judged clearly worse")
			assert.Positive(t, res.Events, "deploy events were judged")
		})
	}
}
