package deployer

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/naming/tags"
)

// acting is what the deploy under way does with the groups it acts on
// (execution.InFlight*): those its records name, by name (a retired group
// gone included: no missing group), and those tagged with its release.
// The zero acting (no deploy under way, or one that could not be read)
// acts on nothing: every group is compared.
type acting struct {
	holder string            // the release holding the lock
	own    string            // what it does with the groups tagged with it
	named  map[string]string // what it does with the groups its records name
}

// state is what the deploy under way does with group name tagged t, ""
// when it does not act on it.
func (a acting) state(name string, t map[string]string) string {
	if s := a.named[name]; s != "" {
		return s
	}
	if a.holder != "" && t[naming.TagReleaseID] == a.holder {
		return a.own
	}
	return ""
}

// inFlight reads the deploy under way in project/config for a drift
// query: the release holding the lock, what it does with the groups it
// acts on (acting), and among groups (those AWS shows in the current
// release's target) the ones it acts on, listed. No release holding the
// lock is nil and the zero acting. A lock or record that cannot be read
// for good is an InFlight saying so (Unknown) and the zero acting: every
// group is then compared (fail closed). A transient failure is the error
// (the task is retried).
func (d *Deployer) inFlight(ctx context.Context, project, config string, groups []asgtypes.AutoScalingGroup) (*execution.InFlight, acting, error) {
	h, held, err := d.locks.Get(ctx, project, config)
	switch {
	case err != nil:
		return unknownInFlight(&execution.InFlight{}, err)
	case !held:
		return nil, acting{}, nil
	}
	fl := &execution.InFlight{ReleaseID: h.ReleaseID, Since: h.Since}
	a, err := d.actingOn(ctx, project, config, h.ReleaseID)
	if err != nil {
		return unknownInFlight(fl, err)
	}
	for _, g := range groups {
		name, t := aws.ToString(g.AutoScalingGroupName), tags.FromASG(g.Tags)
		if state := a.state(name, t); state != "" {
			fl.Groups = append(fl.Groups, execution.InFlightGroup{State: state, Service: t[naming.TagServiceName], Group: name})
		}
	}
	return fl, a, nil
}

// unknownInFlight is fl when err kept the deploy under way from being
// read: a transient err is returned, to be retried; any other says in fl
// why it is unknown.
func unknownInFlight(fl *execution.InFlight, err error) (*execution.InFlight, acting, error) {
	if failure.IsRetryable(err) {
		return nil, acting{}, err
	}
	fl.Unknown = err.Error()
	return fl, acting{}, nil
}

// actingOn is what release, holding the lock, does with the groups it
// acts on: those its deleting record names, here or elsewhere, are
// retiring (the swap is past its point of no return); those its standby
// record names, until a rollback restored them, standing by; its own
// deploying, or retiring once its deploying record says a failure's
// clean-up retires them.
func (d *Deployer) actingOn(ctx context.Context, project, config, releaseID string) (acting, error) {
	a := acting{holder: releaseID, own: execution.InFlightDeploying, named: map[string]string{}}
	dep, _, err := d.ledger.GetDeploying(ctx, project, config, releaseID)
	if err != nil {
		return acting{}, err
	}
	if dep.RetiringSince != nil {
		a.own = execution.InFlightRetiring
	}
	sb, _, err := d.ledger.GetStandby(ctx, project, config, releaseID)
	if err != nil {
		return acting{}, err
	}
	if sb.RestoredAt == nil {
		for _, g := range sb.Groups {
			a.named[g.Name] = execution.InFlightStandingBy
		}
	}
	del, _, err := d.ledger.GetDeleting(ctx, project, config, releaseID)
	if err != nil {
		return acting{}, err
	}
	retiring := del.Groups
	for _, e := range del.Elsewhere {
		retiring = append(retiring, e.Groups...)
	}
	for _, name := range retiring {
		a.named[name] = execution.InFlightRetiring
	}
	return a, nil
}
