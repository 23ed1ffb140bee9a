package main

import (
	"context"
	"flag"

	"github.com/ferryhq/ferry/internal/release"
)

func init() {
	register(&command{
		name:    "schema",
		summary: "Print the JSON Schema of a release file",
		help: `Schema prints the JSON Schema (draft 2020-12) of a release file, for
editors: e.g. ferry schema > release.schema.json, then point your editor's
JSON schema setting at it. Rules across fields are checked only by
ferry validate.`,
		flags: func(fs *flag.FlagSet) func(context.Context, Env, []string) int {
			return func(ctx context.Context, env Env, args []string) int {
				if len(args) > 0 {
					return commands["schema"].usageError(env, "takes no arguments")
				}
				if _, err := env.Stdout.Write(release.Schema()); err != nil {
					return exitFailure
				}
				return exitOK
			}
		},
	})
}
