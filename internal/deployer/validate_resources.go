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
// nothing.
func (d *Deployer) validateResources(ctx context.Context, req execution.Request) (any, error) {
	st, err := d.verify(ctx, req)
	if err != nil {
		return nil, err
	}
	r, clients, err := d.loadAndConnect(ctx, st, true)
	if err != nil {
		return nil, err
	}
	if _, err := resources.Resolve(ctx, clients, r); err != nil {
		return nil, err
	}
	if err := resources.CheckHeadroom(ctx, clients.AutoScaling, r); err != nil {
		return nil, err
	}
	return st, nil
}
