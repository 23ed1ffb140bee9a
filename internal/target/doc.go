// Package target owns the name of an environment ferry deploys into: an
// account, a region and the qualifier of its bootstrap. It is a value
// with no AWS dependency, so the packages that only name environments
// (execution, the state document) stay free of the SDK; package cloud
// connects to one.
package target
