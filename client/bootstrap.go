package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/ferryhq/ferry/infra/bootstrap"
	"github.com/ferryhq/ferry/internal/naming"
)

func init() {
	register(&command{
		name:    "bootstrap",
		summary: "Print the CloudFormation template that bootstraps a target environment",
		help: `Bootstrap prints the CloudFormation template that prepares an account and
region for ferry: the roles the deployer assumes to deploy and publish
(trusting the deployer's account, --trust-account, repeatable or
comma-separated) and the asset bucket, named with --qualifier when one
account-region has several bootstraps. Deploy it with your usual tooling,
e.g.

  ferry bootstrap --trust-account 111111111111 > bootstrap.json
  aws cloudformation deploy --stack-name ferry-bootstrap \
    --template-file bootstrap.json --capabilities CAPABILITY_NAMED_IAM

It exits 0, or 2 on a wrong account id or qualifier.`,
		flags: func(fs *flag.FlagSet) func(context.Context, Env, []string) int {
			var accounts []string
			fs.Func("trust-account", "the deployer's `ACCOUNT` id, trusted to assume the roles (required; repeatable)", func(v string) error {
				for _, a := range strings.Split(v, ",") {
					if a = strings.TrimSpace(a); a != "" {
						accounts = append(accounts, a)
					}
				}
				return nil
			})
			qualifier := fs.String("qualifier", "", "the bootstrap's qualifier (lowercase letters and digits), for a second bootstrap of one account-region")
			return func(ctx context.Context, env Env, args []string) int {
				c := commands["bootstrap"]
				if len(args) > 0 {
					return c.usageError(env, "takes no arguments")
				}
				if len(accounts) == 0 {
					return c.usageError(env, "--trust-account is required: the account id of the deployer")
				}
				tmpl, err := bootstrap.Render(accounts, *qualifier)
				if err != nil {
					return c.usageError(env, "%v", err)
				}
				if _, err := env.Stdout.Write(tmpl); err != nil {
					return exitFailure
				}
				fmt.Fprintf(env.Stderr, "ferry bootstrap: deploy this template in each account and region ferry deploys to (e.g. as stack %s)\n", naming.BootstrapStackName)
				return exitOK
			}
		},
	})
}
