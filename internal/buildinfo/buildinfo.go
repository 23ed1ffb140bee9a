package buildinfo

import (
	"fmt"
	"runtime/debug"
)

// Set by the Makefile's build with -ldflags -X (see the package doc).
var (
	version string
	commit  string
)

// Unknown is the version or commit of a build that carries none.
const Unknown = "unknown"

// Info describes one build.
type Info struct {
	// Version is the release version (git describe), or the module
	// version the toolchain recorded ("(devel)" for a local build).
	Version string `json:"version"`
	// Commit is the VCS revision, with "-dirty" when the tree had
	// uncommitted changes; Unknown when not recorded.
	Commit string `json:"commit"`
	// GoVersion is the Go release that built the binary.
	GoVersion string `json:"go_version"`
}

// Get returns the running binary's build information.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return resolve(version, commit, bi)
}

// resolve prefers the linker-set values, then what bi records, then
// Unknown.
func resolve(linkVersion, linkCommit string, bi *debug.BuildInfo) Info {
	info := Info{Version: linkVersion, Commit: linkCommit}
	if bi != nil {
		info.GoVersion = bi.GoVersion
		if info.Version == "" {
			info.Version = bi.Main.Version
		}
		if info.Commit == "" {
			info.Commit = vcsCommit(bi.Settings)
		}
	}
	if info.Version == "" {
		info.Version = Unknown
	}
	if info.Commit == "" {
		info.Commit = Unknown
	}
	if info.GoVersion == "" {
		info.GoVersion = Unknown
	}
	return info
}

// vcsCommit is the vcs.revision setting, with "-dirty" when vcs.modified.
func vcsCommit(settings []debug.BuildSetting) string {
	var rev string
	var modified bool
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev != "" && modified {
		rev += "-dirty"
	}
	return rev
}

// String is the one line ferry version prints:
// "VERSION (commit COMMIT, GOVERSION)".
func (i Info) String() string {
	return fmt.Sprintf("%s (commit %s, %s)", i.Version, i.Commit, i.GoVersion)
}
