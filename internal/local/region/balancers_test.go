package region

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/sim"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// webELB is the classic load balancer the deploy-test release names.
const webELB = "coinbase-deploy-test-web-elb"

// TestOutsideDetachNeverLeavesALoadBalancerDark: the release's new group
// taken out of its classic load balancer from outside ferry (ferry local
// world detach), through the real definition and handlers: during
// CheckHealthy, ferry attaches it again and the deploy succeeds with the
// load balancer serving the new group, never dark; during the bake, while
// the previous group stands by, the detach itself leaves the load
// balancer dark (the one cut, the operator's), and the release rolls
// back: the previous group serves it again.
func TestOutsideDetachNeverLeavesALoadBalancerDark(t *testing.T) {
	tests := []struct {
		name string
		task string // the task whose second invocation the detach precedes
		bake int
		end  string
		serv string // the release whose group serves the load balancer at the end
		dark int    // how many times the load balancer went dark
	}{
		{name: "during CheckHealthy", task: execution.TaskCheckHealthy, end: execution.EndSuccess, serv: "r-next"},
		{name: "during the bake", task: execution.TaskBake, bake: 600, end: execution.EndFailureClean, serv: "r-prev", dark: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			var r *Region
			calls := 0
			r, clk := newTestRegion(t, Options{Intercept: func(ctx context.Context, req execution.Request, next Invoke) (json.RawMessage, error) {
				if req.Task == tt.task && req.Execution.Name == "r-next" {
					if calls++; calls == 2 {
						_, err := r.Meddle(ctx, Meddling{Action: MeddleDetach, Group: naming.GroupName(testProject, testConfig, "web", "r-next"), LoadBalancer: webELB})
						require.NoError(t, err)
					}
				}
				return next(ctx, req)
			}})
			prev, err := r.StartRelease(ctx, releaseJSON(t, clk, "r-prev"))
			require.NoError(t, err)
			require.NoError(t, prev.Wait(ctx))
			require.Equal(t, execution.EndSuccess, last(prev.Path()))
			x, err := r.StartRelease(ctx, releaseJSON(t, clk, "r-next", func(rel *release.Release) { rel.BakeSeconds = tt.bake }))
			require.NoError(t, err)
			require.NoError(t, x.Wait(ctx))

			require.GreaterOrEqual(t, calls, 2, "detached mid-task")
			d := x.Describe()
			assert.Equal(t, tt.end, last(x.Path()), "%s: %s", d.Error, d.Cause)
			if tt.end == execution.EndFailureClean {
				assert.Contains(t, d.Cause, "its new group is not registered with classic load balancer "+webELB)
			}
			served, wentDark := inServiceIn(t, r.World(), webELB)
			group := naming.GroupName(testProject, testConfig, "web", tt.serv)
			assert.Positive(t, served[group], "served by %s", group)
			assert.Len(t, served, 1, "by it alone")
			assert.Equal(t, tt.dark, wentDark)
			assert.Equal(t, tt.dark, r.World().CutConnections(), "no cut but the detach itself")
		})
	}
}

// inServiceIn counts the instances the classic load balancer lb of the
// world's first account-region reports in service, by the group each
// belongs to, and how many times it went dark.
func inServiceIn(t *testing.T, w *sim.World, lb string) (map[string]int, int) {
	t.Helper()
	a := w.Snapshot().Accounts[0]
	group := map[string]string{}
	for _, g := range a.Groups {
		for _, i := range g.Instances {
			group[i.ID] = g.Name
		}
	}
	for _, rs := range a.LoadBalancers {
		if rs.Name != lb {
			continue
		}
		out := map[string]int{}
		for id, state := range rs.Instances {
			if state == "healthy" {
				out[group[id]]++
			}
		}
		return out, rs.WentDark
	}
	t.Fatalf("no classic load balancer %s in %s/%s", lb, a.Account, a.Region)
	return nil, 0
}
