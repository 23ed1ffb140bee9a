package conformance

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MotoCommand is the moto server's executable, looked up on PATH.
const MotoCommand = "moto_server"

// ErrNoMoto says moto_server is not on PATH, so the suite cannot run.
var ErrNoMoto = errors.New(MotoCommand + " is not on PATH: install moto 5.2.1 (pip install 'moto[server]==5.2.1'); " +
	"this machine reaches no Python package index, so the project cannot install it itself")

// motoStartTimeout bounds how long a new moto_server may take to answer.
const motoStartTimeout = 30 * time.Second

// Moto is one moto_server process on a free loopback port.
type Moto struct {
	// URL is the server's base URL (http://127.0.0.1:PORT).
	URL  string
	cmd  *exec.Cmd
	done chan error
	http *http.Client
}

// motoPortAttempts bounds how many free ports StartMoto tries: a port
// found free can be taken by another process (another package's tests
// start their own moto) before moto_server binds it.
const motoPortAttempts = 3

// errPortTaken is startMoto's error when moto_server could not bind the
// port it was given.
var errPortTaken = errors.New("port taken")

// StartMoto starts moto_server on a free loopback port and waits until it
// answers, on another port when the one it found free was taken before
// moto_server bound it. ErrNoMoto when moto_server is not on PATH.
func StartMoto(ctx context.Context) (*Moto, error) {
	path, err := exec.LookPath(MotoCommand)
	if err != nil {
		return nil, ErrNoMoto
	}
	for attempt := 1; ; attempt++ {
		m, err := startMoto(ctx, path)
		if !errors.Is(err, errPortTaken) || attempt == motoPortAttempts {
			return m, err
		}
	}
}

// startMoto starts moto_server at path on a free loopback port.
func startMoto(ctx context.Context, path string) (*Moto, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("conformance: finding a free port for moto: %w", err)
	}
	cmd := exec.Command(path, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	out := &limited{left: 8 << 10}
	cmd.Stdout, cmd.Stderr = nil, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("conformance: starting %s: %w", MotoCommand, err)
	}
	m := &Moto{
		URL:  fmt.Sprintf("http://127.0.0.1:%d", port),
		cmd:  cmd,
		done: make(chan error, 1),
		http: &http.Client{Timeout: 5 * time.Second},
	}
	go func() { m.done <- cmd.Wait() }()
	deadline := time.Now().Add(motoStartTimeout)
	for {
		if err := m.ping(ctx); err == nil {
			return m, nil
		}
		select {
		case err := <-m.done:
			m.done <- err
			if strings.Contains(out.String(), "Address already in use") {
				err = fmt.Errorf("%w: %v", errPortTaken, err)
			}
			return nil, fmt.Errorf("conformance: %s exited before it answered (%w): %s", MotoCommand, err, out.String())
		case <-ctx.Done():
			_ = m.Close()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = m.Close()
			return nil, fmt.Errorf("conformance: %s did not answer on %s within %v: %s", MotoCommand, m.URL, motoStartTimeout, out.String())
		}
	}
}

func (m *Moto) ping(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.URL+"/moto-api/data.json", nil)
	if err != nil {
		return err
	}
	resp, err := m.http.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("moto answered %s", resp.Status)
	}
	return nil
}

// Reset empties every moto backend (POST /moto-api/reset).
func (m *Moto) Reset(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.URL+"/moto-api/reset", nil)
	if err != nil {
		return err
	}
	resp, err := m.http.Do(req)
	if err != nil {
		return fmt.Errorf("conformance: resetting moto: %w", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("conformance: resetting moto: %s", resp.Status)
	}
	return nil
}

// Close kills the moto_server process and waits for it.
func (m *Moto) Close() error {
	if m.cmd.Process == nil {
		return nil
	}
	_ = m.cmd.Process.Kill()
	<-m.done
	return nil
}

// freePort asks the kernel for a free loopback TCP port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// limited keeps at most left bytes of what is written to it; String may
// be called while the process still writes.
type limited struct {
	mu   sync.Mutex
	w    strings.Builder
	left int
}

func (l *limited) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

func (l *limited) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	if l.left > 0 {
		q := p
		if len(q) > l.left {
			q = q[:l.left]
		}
		l.w.Write(q)
		l.left -= len(q)
	}
	return n, nil
}
