package deployer

import (
	"context"
	"fmt"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/asset"
	"github.com/ferryhq/ferry/internal/store/ledger"
	"github.com/ferryhq/ferry/internal/tuning"
)

// assetsInUse returns the SHA-256s of the assets an asset collection of
// project/config keeps: those its Config.KeepReleases newest releases
// name, and the release deployed now (its current record), and the release
// holding its lock, whatever their age. A release, record or lock it
// cannot read is an error: what it names is not known, so nothing may be
// collected.
func (d *Deployer) assetsInUse(ctx context.Context, project, config string) (map[string]bool, error) {
	ids, err := d.ledger.Releases(ctx, project, config)
	if err != nil {
		return nil, err
	}
	ids = ids[:min(len(ids), d.cfg.KeepReleases)]
	cur, deployed, err := d.ledger.GetCurrent(ctx, project, config)
	if err != nil {
		return nil, err
	}
	if deployed {
		ids = append(ids, cur.ReleaseID)
	}
	h, held, err := d.locks.Get(ctx, project, config)
	if err != nil {
		return nil, err
	}
	if held {
		ids = append(ids, h.ReleaseID)
	}
	keep := map[string]bool{}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		r, err := d.ledger.GetRelease(ctx, project, config, id)
		if err != nil {
			return nil, fmt.Errorf("assets of release %s: %w", id, err)
		}
		for _, a := range r.Assets {
			if a != nil {
				keep[a.SHA256] = true
			}
		}
	}
	return keep, nil
}

// collectAssets deletes the assets of pc in the deployer bucket that
// assetsInUse does not name and that are older than tuning.AssetGrace
// (asset.Collect), and returns how many it deleted. A reconcile pass runs
// it: a client uploads assets before the release that names them, and the
// grace keeps an upload from being collected before its release exists.
func (d *Deployer) collectAssets(ctx context.Context, pc ledger.ProjectConfig) (int, error) {
	keep := func(ctx context.Context) (map[string]bool, error) { return d.assetsInUse(ctx, pc.Project, pc.Config) }
	deleted, err := asset.Collect(ctx, d.store, d.cfg.Bucket, naming.AssetPrefix(pc.Project, pc.Config), d.now().Add(-tuning.AssetGrace), keep)
	if len(deleted) > 0 {
		d.log.Info("reconcile: assets no recent release names deleted", "project", pc.Project, "config", pc.Config, "assets", len(deleted))
	}
	return len(deleted), err
}

// collectPublished deletes the assets of st's project-config in its
// target's asset bucket (naming.TargetAssetPrefix) that assetsInUse does
// not name and that are older than tuning.AssetGrace.
//
// CleanUpSuccess runs it, past the swap, while st's release holds the
// project-config's lock (checked again before it decides what to keep,
// once some asset is old enough): Publish of a release of
// the project-config, the only writer of its prefix (the publish role's
// session may write only its own project-config's), needs that lock, so
// no deploy can start using an asset while it is being collected; and
// every group the project-config still runs is the new release's, whose
// assets are kept. Assets under assets/<sha256>, the layout before
// project-config prefixes, are never touched.
//
// It is best effort: a failure (a target bootstrapped before the publish
// role could delete, a throttled listing) is logged and the release
// succeeds anyway; the next success collects what is left.
func (d *Deployer) collectPublished(ctx context.Context, c *cloud.Clients, st *execution.State) {
	log := d.log.With("release_id", st.ReleaseID, "task", execution.TaskCleanUpSuccess)
	keep := func(ctx context.Context) (map[string]bool, error) {
		if err := d.holdsLock(ctx, st); err != nil {
			return nil, err
		}
		return d.assetsInUse(ctx, st.ProjectName, st.ConfigName)
	}
	bucket := naming.AssetBucketName(st.Target.AccountID, st.Target.Region, st.Target.Qualifier)
	deleted, err := asset.Collect(ctx, c.Assets, bucket, naming.TargetAssetPrefix(st.ProjectName, st.ConfigName), d.now().Add(-tuning.AssetGrace), keep)
	if len(deleted) > 0 {
		log.Info("published assets no recent release names deleted", "bucket", bucket, "assets", len(deleted))
	}
	if err != nil {
		log.Warn("published assets not collected", "bucket", bucket, "deleted", len(deleted), "error", err.Error())
	}
}
