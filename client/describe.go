package main

import "github.com/ferryhq/ferry/internal/release"

// describeRelease is the line deploy prints under a release's id: its
// version and description, "" when it gives neither.
func describeRelease(r *release.Release) string {
	d := oneLine(r.Description)
	switch {
	case r.Version == "" && d == "":
		return ""
	case r.Version == "":
		return "  " + d
	case d == "":
		return "  version " + r.Version
	}
	return "  version " + r.Version + ": " + d
}

// deployerVersion names the deployer build that recorded a release, ""
// for records written before deployers said.
func deployerVersion(v string) string {
	if v == "" {
		return ""
	}
	return "deployer " + v
}
