// Package release owns the release: what a team asks ferry to deploy for one
// project into one config. It decodes a release strictly, applies defaults
// in one place, validates it (returning every problem at once, each as
// "path: message"), renders user data templates, computes the canonical
// hash that proves two copies of a release are the same, and describes the
// release as a JSON Schema. It owns the release's options, the canary
// analysis's (Analysis) among them; package analysis judges it.
package release
