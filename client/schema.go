package main

import (
	"context"
	"flag"

	"github.com/ferryhq/ferry/internal/release"
)

// schemaCommand is ferry schema.
type schemaCommand struct {
	env Env
}

func (c *schemaCommand) spec() commandSpec {
	return commandSpec{
		name:    "schema",
		summary: "Print the JSON Schema of a release file",
		help: `Schema prints the JSON Schema (draft 2020-12) of a release file, for
editors: e.g. ferry schema > release.schema.json, then point your editor's
JSON schema setting at it. Rules across fields are checked only by
ferry validate.`,
	}
}

func (c *schemaCommand) defineFlags(*flag.FlagSet) {}

// Run prints the schema. A schema that cannot be written fails silently:
// stdout is where it would have been said.
func (c *schemaCommand) Run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usageErrorf(c.spec(), "takes no arguments")
	}
	if _, err := c.env.Stdout.Write(release.Schema()); err != nil {
		return exitSilently(exitFailure)
	}
	return nil
}
