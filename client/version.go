package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/ferryhq/ferry/internal/buildinfo"
)

// versionCommand is ferry version (and ferry --version).
type versionCommand struct {
	env  Env
	json bool
}

func (c *versionCommand) spec() commandSpec {
	return commandSpec{
		name:    "version",
		summary: "Print ferry's version, commit and Go version",
		help: `Version prints the version of this ferry binary, the commit it was built
from and the Go version that built it. ferry --version does the same.
ferry status shows the version of the deployer that deployed a release.`,
	}
}

func (c *versionCommand) defineFlags(fs *flag.FlagSet) {
	fs.BoolVar(&c.json, "json", false, "print a JSON object (version, commit, go_version)")
}

func (c *versionCommand) Run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usageErrorf(c.spec(), "takes no arguments")
	}
	info := buildinfo.Get()
	if c.json {
		return writeEvent(c.env.Stdout, evVersion, info, true)
	}
	fmt.Fprintf(c.env.Stdout, "ferry %s\n", info)
	return nil
}
