package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// LambdaBuild is how `make build` builds the Lambda: static, linux/arm64,
// without the RPC runtime, stripped.
const LambdaBuild = "CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -trimpath -tags lambda.norpc -ldflags='-s -w' ./lambdas"

// LambdaBinary measures the Lambda binary at path, or, when path is empty,
// builds it as LambdaBuild says into a temporary directory (the go command
// on PATH, in the module that holds the working directory) and measures
// that.
func LambdaBinary(ctx context.Context, path string) (*Binary, error) {
	if path == "" {
		dir, err := os.MkdirTemp("", "ferry-bench-lambda-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		root, err := moduleRoot(ctx)
		if err != nil {
			return nil, err
		}
		out := filepath.Join(dir, "bootstrap")
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-tags", "lambda.norpc", "-ldflags=-s -w", "-o", out, "./lambdas")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("bench: building the Lambda (%s): %w: %s", LambdaBuild, err, strings.TrimSpace(stderr.String()))
		}
		b, err := measure(out)
		if err != nil {
			return nil, err
		}
		b.Path = "(built in a temporary directory)"
		return b, nil
	}
	return measure(path)
}

func measure(path string) (*Binary, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("bench: the Lambda binary: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("bench: the Lambda binary %s is not a file", path)
	}
	return &Binary{Path: path, Bytes: fi.Size(), Build: LambdaBuild}, nil
}

// moduleRoot is the directory of the main module's go.mod.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("bench: go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("bench: not inside the ferry module (go env GOMOD is empty)")
	}
	return filepath.Dir(mod), nil
}
