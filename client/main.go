package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// main runs the command line and is the one place that turns the error it
// returns into the process status (exitStatus prints its message).
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newCLI(Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}).Run(ctx, os.Args[1:])
	stop()
	os.Exit(exitStatus(os.Stderr, err))
}
