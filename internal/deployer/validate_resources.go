package deployer

import (
	"context"
	"fmt"
	"slices"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fleet"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/resources"
	"github.com/ferryhq/ferry/internal/tags"
)

// validateResources is the ValidateResources task: it resolves every
// resource the release names in its target and checks that the release may
// use it, and reports every problem at once as a *failure.BadReleaseError;
// then it checks that the region has room for the release's Auto Scaling
// groups beside the previous ones (resources.CheckHeadroom), and that
// its swap retires no service it leaves out unless it names it under
// remove (checkRemovals). It creates nothing. When AWS throttles it, it
// reports a wait and runs again after it (progress), as Deploy does.
func (d *Deployer) validateResources(ctx context.Context, req execution.Request) (any, error) {
	st, err := d.verify(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := d.checkTimeout(st, req); err != nil {
		return nil, err
	}
	if st.Resources, err = d.progress(st, req, execution.TaskValidateResources, d.checkResources(ctx, st)); err != nil {
		return nil, err
	}
	return st, nil
}

// checkResources resolves and checks the release's resources, its
// removals and the region's headroom (see validateResources).
func (d *Deployer) checkResources(ctx context.Context, st *execution.State) error {
	r, clients, err := d.loadAndConnect(ctx, st, true)
	if err != nil {
		return err
	}
	if _, err := resources.Resolve(ctx, clients, r); err != nil {
		return err
	}
	if err := checkRemovals(ctx, clients, st, r); err != nil {
		return err
	}
	return resources.CheckHeadroom(ctx, clients.AutoScaling, r)
}

// checkRemovals refuses, as a *failure.BadReleaseError naming them, a
// release whose swap would retire the groups of services it neither
// deploys nor names under remove: the project-config's groups of other
// releases, not being deleted, of a service left out. A service dropped
// from a release by mistake so keeps serving. A destroy retires every
// group by definition: nothing to refuse.
func checkRemovals(ctx context.Context, c *cloud.Clients, st *execution.State, r *release.Release) error {
	if r.Destroy {
		return nil
	}
	groups, err := fleet.Groups(ctx, c.AutoScaling, ownerOf(st))
	if err != nil {
		return err
	}
	var unlisted []string
	for _, g := range groups {
		t := tags.FromASG(g.Tags)
		svc := t[naming.TagServiceName]
		if fleet.Deleting(g) || t[naming.TagReleaseID] == r.ReleaseID || r.Services[svc] != nil || slices.Contains(r.Remove, svc) {
			continue
		}
		unlisted = append(unlisted, svc)
	}
	if len(unlisted) == 0 {
		return nil
	}
	slices.Sort(unlisted)
	return failure.BadRelease(fmt.Sprintf("remove: the deploy would delete the serving groups of %s, which the release does not deploy; "+
		"name them under \"remove\" to delete them, or deploy them", joinNames(slices.Compact(unlisted))))
}
