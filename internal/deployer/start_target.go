package deployer

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// startTarget makes the release target j of the promotion's stage
// deploys and stores it, with the assets it names copied into the
// target config's prefix: its release id is the promotion's, its
// created_at when the stage's gates held, so every attempt makes the
// same bytes (a nested execution of the same name and input is the same
// execution).
func (d *Deployer) startTarget(ctx context.Context, req execution.Request) (any, error) {
	var in execution.WaveTarget
	if err := json.Unmarshal(req.Input, &in); err != nil {
		return nil, &failure.InternalError{Msg: fmt.Sprintf("task StartTarget: input is not a wave's target: %v", err)}
	}
	p, err := d.loadPromotion(ctx, req, &in.Promotion)
	if err != nil {
		return nil, err
	}
	i, j := in.Promotion.Stage, in.Target
	stage := p.rec.Stages[i]
	if stage.Status != ledger.PromotionDeploying || j < 0 || j >= len(stage.Targets) {
		return nil, &failure.InternalError{Msg: fmt.Sprintf("task StartTarget: stage %d is %s, target %d of %d", i, stage.Status, j, len(stage.Targets))}
	}
	r, err := d.promotedRelease(p, i, j)
	if err != nil {
		return nil, err
	}
	raw, err := release.Canonical(r)
	if err != nil {
		return nil, failure.BadRelease("release: " + err.Error())
	}
	for _, name := range slices.Sorted(maps.Keys(r.Assets)) {
		if err := d.copyAsset(ctx, r.ProjectName, in.Promotion.FirstConfig, r.ConfigName, r.Assets[name]); err != nil {
			return nil, err
		}
	}
	if err := d.ledger.PutRelease(ctx, r.ProjectName, r.ConfigName, r.ReleaseID, raw); err != nil {
		return nil, err
	}
	return execution.TargetStart{Name: naming.ExecutionName(r.ProjectName, r.ConfigName, r.ReleaseID), Release: raw}, nil
}

// promotedRelease is the release target j of stage i deploys in the
// promotion: what the pipeline derives, named by the promotion.
func (d *Deployer) promotedRelease(p *promotion, i, j int) (*release.Release, error) {
	r, err := p.q.Pipeline.Release(p.q.Release, i, j)
	if err != nil {
		return nil, failure.BadRelease(err.Error())
	}
	r.ReleaseID, r.CreatedAt, r.Identity = p.st.PromotionID, p.rec.Stages[i].ReleasedAt.UTC().Truncate(time.Millisecond), nil
	r.CreatedBy = cmp.Or(p.rec.StartedByName, "promotion "+p.st.PromotionID)
	r.RollbackOf, r.HealOf, r.PromotionOf = "", "", p.st.FirstConfig
	return r, nil
}

// copyAsset copies an asset the client uploaded under the first stage's
// config to config's prefix, checked against its hash, unless it is
// there already.
func (d *Deployer) copyAsset(ctx context.Context, project, from, config string, a *release.Asset) error {
	if a == nil || from == config {
		return nil
	}
	dst := naming.AssetKey(project, config, a.SHA256)
	if body, found, err := d.ledger.GetClientObject(ctx, dst, limits.MaxAssetBytes); err != nil {
		return err
	} else if found && sha256Of(body) == a.SHA256 {
		return nil
	}
	src := naming.AssetKey(project, from, a.SHA256)
	body, found, err := d.ledger.GetClientObject(ctx, src, limits.MaxAssetBytes)
	switch {
	case err != nil:
		return err
	case !found:
		return failure.BadRelease(fmt.Sprintf("asset %s: not uploaded to the deployer bucket (%s)", a.SHA256, src))
	case sha256Of(body) != a.SHA256:
		return failure.BadRelease(fmt.Sprintf("asset %s: the deployer bucket's %s holds other bytes", a.SHA256, src))
	}
	return d.ledger.PutClientObject(ctx, dst, body)
}

func sha256Of(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
