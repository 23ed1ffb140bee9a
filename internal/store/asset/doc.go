// Package asset owns content-addressed assets: files a release ships
// (packages, scripts) stored under the hex SHA-256 of their bytes, so an
// asset is uploaded once and a key always names the same bytes; and their
// collection (Collect), which deletes the assets under a prefix that no
// recent release names: a reconcile pass collects a project-config's
// uploads in the deployer bucket, and a successful deploy, holding the
// project-config's lock, what Publish published in its target's asset
// bucket.
package asset
