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
		args:    "[release | events]",
		summary: "Print the JSON Schema of a release file, or of --json output",
		help: `Schema prints the JSON Schema (draft 2020-12) of a release file, for
editors: e.g. ferry schema > release.schema.json, then point your editor's
JSON schema setting at it. Rules across fields are checked only by
ferry validate.

ferry schema events prints the schema of every object ferry prints under
--json: the events of a deploy it follows (one object a line) and each
command's result. Each object's "event" names its kind, one definition
each under $defs; "schema_version" is the version of the schema, which
goes up only when a key is removed or changes meaning. The detail of each
deploy event the deployer puts on EventBridge (ferry help events) is an
object of the same schema: its "event" is the detail-type's name
("Release Succeeded": release_succeeded), and its "id" is the same each
time the event is put, for consumers to drop repeats.`,
	}
}

func (c *schemaCommand) defineFlags(*flag.FlagSet) {}

// Run prints the schema args name: a release file's (none, or release)
// or --json output's (events). A schema that cannot be written fails silently:
// stdout is where it would have been said.
func (c *schemaCommand) Run(ctx context.Context, args []string) error {
	schema := release.Schema
	switch {
	case len(args) > 1:
		return usageErrorf(c.spec(), "takes one argument at most")
	case len(args) == 1 && args[0] == "events":
		schema = func() []byte { return eventsSchema(eventKinds, eventKeyDocs) }
	case len(args) == 1 && args[0] != "release":
		return usageErrorf(c.spec(), "unknown schema %q: release or events", args[0])
	}
	if _, err := c.env.Stdout.Write(schema()); err != nil {
		return exitSilently(exitFailure)
	}
	return nil
}
