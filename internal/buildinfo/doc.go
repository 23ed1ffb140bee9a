// Package buildinfo says which build of ferry is running: its version, the
// commit it was built from and the Go version that built it.
//
// The Makefile's build sets Version and Commit with
// -ldflags "-X github.com/ferryhq/ferry/internal/buildinfo.version=... -X ...commit=..."
// from `git describe`; a binary built otherwise (go build, go install, go
// test) falls back on what the Go toolchain embedded (runtime/debug
// ReadBuildInfo): the main module's version and, when built with VCS
// stamping, the revision and whether the tree was modified.
//
// The client prints it (ferry version, ferry --version); the Lambda and
// the local region pass it to the deployer, which writes it as
// deployer_version into every outcome and current record, so status can
// say which deployer version deployed a release.
package buildinfo
