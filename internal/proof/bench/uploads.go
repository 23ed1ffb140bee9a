package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/region"
	"github.com/ferryhq/ferry/internal/local/s3server"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/asset"
)

// AssetUploads deploys the same release file (the S=1, N=1 cell's, with its
// asset) twice to a local region served on a loopback port, and counts the
// bytes of every PutObject (or multipart upload) on the deployer bucket's
// asset keys during each deploy.
//
// With ferry (the path of a ferry binary), each deploy is
// `ferry deploy --local --no-wait FILE`, the region's execution then
// followed to its end in-process. Without, each deploy uploads the asset
// with asset.Upload (the function ferry deploy calls) over the same HTTP
// endpoint.
func AssetUploads(ctx context.Context, ferry string) (*Uploads, error) {
	r, err := region.New(ctx, region.Options{World: World(Cell{Services: 1, Instances: 1})})
	if err != nil {
		return nil, fmt.Errorf("bench: asset uploads: %w", err)
	}
	defer r.Close()

	var counted atomic.Int64
	prefix := "/" + r.Bucket() + "/" + naming.AssetKey(Project, Config, "")
	handler := r.Handler()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bench: asset uploads: %w", err)
	}
	srv := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if (req.Method == http.MethodPut || req.Method == http.MethodPost) && strings.HasPrefix(req.URL.Path, prefix) {
				req.Body = &countingBody{ReadCloser: req.Body, n: &counted}
			}
			handler.ServeHTTP(w, req)
		}),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
		<-served
	}()
	url := "http://" + ln.Addr().String()

	dir, err := os.MkdirTemp("", "ferry-bench-assets-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "release.json")
	raw, err := ReleaseFile(Cell{Services: 1, Instances: 1}, 1)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, AssetFile), AssetContent, 0o600); err != nil {
		return nil, err
	}

	up := &Uploads{Method: "in-process asset.Upload over HTTP (the function ferry deploy calls)"}
	deploy := func() error {
		client := s3server.NewClient(url, func(o *s3.Options) { o.HTTPClient = region.HTTPClient() })
		_, _, _, err := asset.Upload(ctx, client, r.Bucket(), Project, Config, filepath.Join(dir, AssetFile))
		return err
	}
	if ferry != "" {
		up.Method = "ferry deploy --local --no-wait, twice, against the served local region"
		deploy = func() error { return ferryDeploy(ctx, r, ferry, url, file) }
	}
	for i, into := range []*int64{&up.FirstAssetBytes, &up.SecondAssetBytes} {
		counted.Store(0)
		if err := deploy(); err != nil {
			return nil, fmt.Errorf("bench: asset uploads: deploy %d: %w", i+1, err)
		}
		*into = counted.Load()
	}
	return up, nil
}

// ferryDeploy runs ferry deploy --local --no-wait file against the region
// at url and waits for the execution it started to succeed.
func ferryDeploy(ctx context.Context, r *region.Region, ferry, url, file string) error {
	before := len(r.Executions(""))
	cmd := exec.CommandContext(ctx, ferry, "deploy", "--local", "--no-wait", file)
	cmd.Env = append(os.Environ(), "FERRY_LOCAL_ENDPOINT="+url, "FERRY_CREATED_BY=bench", "NO_COLOR=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s deploy: %w:\n%s", ferry, err, out.String())
	}
	xs := r.Executions("")
	if len(xs) != before+1 {
		return fmt.Errorf("ferry deploy started %d executions, not one:\n%s", len(xs)-before, out.String())
	}
	x := xs[0] // newest first
	if err := x.Wait(ctx); err != nil {
		return err
	}
	if d := x.Describe(); d.Status != asl.StatusSucceeded {
		return errors.New("the deploy ended " + string(d.Status) + ": " + d.Error + ": " + failure.Message(d.Cause))
	}
	return nil
}

// countingBody counts the bytes read from a request body.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}
