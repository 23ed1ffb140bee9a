// Package asset owns content-addressed assets in the deployer bucket: files
// a release ships (packages, scripts) stored under the hex SHA-256 of their
// bytes, so an asset is uploaded once and a key always names the same
// bytes; and their collection (Collect): the assets no recent release
// names are deleted by the reconcile pass.
package asset
