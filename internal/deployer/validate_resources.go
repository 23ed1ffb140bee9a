package deployer

import (
	"context"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/resources"
)

// validateResources is the ValidateResources task: it resolves every
// resource the release names in its target and checks that the release may
// use it, and reports every problem at once as a *failure.BadReleaseError;
// then it checks that the region has room for the release's Auto Scaling
// groups beside the previous ones (resources.CheckHeadroom). It creates
// nothing. When AWS throttles it, it reports a wait and runs again after
// it (progress), as Deploy does.
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

// checkResources resolves and checks the release's resources and the
// region's headroom (see validateResources).
func (d *Deployer) checkResources(ctx context.Context, st *execution.State) error {
	r, clients, err := d.loadAndConnect(ctx, st, true)
	if err != nil {
		return err
	}
	if _, err := resources.Resolve(ctx, clients, r); err != nil {
		return err
	}
	return resources.CheckHeadroom(ctx, clients.AutoScaling, r)
}
