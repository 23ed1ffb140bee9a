// Package asset owns content-addressed assets in the deployer bucket: files
// a release ships (packages, scripts) stored under the hex SHA-256 of their
// bytes, so an asset is uploaded once and a key always names the same
// bytes.
package asset
