package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/ferryhq/ferry/infra/bootstrap"
	"github.com/ferryhq/ferry/internal/naming"
)

// bootstrapCommand is ferry bootstrap.
type bootstrapCommand struct {
	env       Env
	accounts  []string
	qualifier string
}

func (c *bootstrapCommand) spec() commandSpec {
	return commandSpec{
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
		exits: []int{exitFailure},
	}
}

func (c *bootstrapCommand) defineFlags(fs *flag.FlagSet) {
	fs.Func("trust-account", "the deployer's `ACCOUNT` id, trusted to assume the roles (required; repeatable)", func(v string) error {
		for _, a := range strings.Split(v, ",") {
			if a = strings.TrimSpace(a); a != "" && !slices.Contains(c.accounts, a) {
				c.accounts = append(c.accounts, a)
			}
		}
		return nil
	})
	fs.StringVar(&c.qualifier, "qualifier", "", "the bootstrap's qualifier (lowercase letters and digits), for a second bootstrap of one account-region")
}

// Run prints the bootstrap template. A template that cannot be written
// fails silently: stdout is where it would have been said.
func (c *bootstrapCommand) Run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usageErrorf(c.spec(), "takes no arguments")
	}
	if len(c.accounts) == 0 {
		return usageErrorf(c.spec(), "--trust-account is required: the account id of the deployer")
	}
	tmpl, err := bootstrap.Render(c.accounts, c.qualifier)
	if err != nil {
		return usageErrorf(c.spec(), "%v", err)
	}
	if _, err := c.env.Stdout.Write(tmpl); err != nil {
		return exitSilently(exitFailure)
	}
	fmt.Fprintf(c.env.Stderr, "ferry bootstrap: deploy this template in each account and region ferry deploys to (e.g. as stack %s)\n", naming.BootstrapStackName)
	return nil
}
