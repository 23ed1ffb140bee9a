// Command lambdas is the deployer Lambda: one function that runs every task
// state of the deploy state machine. main parses the typed configuration
// from the environment (names in package naming), builds the real AWS
// clients (the deployer bucket's S3 client, STS, a cloud.Connector that
// assumes each target's deploy and publish roles), and serves
// deployer.Deployer.Invoke through aws-lambda-go.
//
// A handler error reaches Step Functions as the error name of ferry's
// registry (failure.NameOf), so the state machine's Catch and Retry match
// it. Build it for linux/arm64 with -tags lambda.norpc (make build). It
// must never import the CDK (make thin checks).
package main
