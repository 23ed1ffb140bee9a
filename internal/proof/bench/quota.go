package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// QuotaPeriod is the period of the CPU quota the handlers run under
// (CPUQuota): the Linux CFS default.
const QuotaPeriod = 100 * time.Millisecond

// CPUQuota is a control group of this machine that holds the processes
// added to it to a share of one CPU: cgroup v2's cpu.max or cgroup v1's
// cpu.cfs_quota_us, QuotaPeriod long periods. The deployer's Lambda runs
// on a share of a vCPU in proportion to its memory (LambdaCPUShare); a
// process under this quota does too.
type CPUQuota struct {
	dir string
	// Method says what holds the share, for the report.
	Method string
}

// ErrNoQuota is NewCPUQuota's error when this machine offers no control
// group this process may make and limit (not Linux, no cpu controller,
// or no right to write it).
var ErrNoQuota = errors.New("bench: no writable cpu control group for a CPU quota")

// NewCPUQuota makes a control group, below this process's own, that holds
// its processes to share of one CPU. The caller must Close it. Where none
// can be made it fails with ErrNoQuota, wrapped with the reason.
func NewCPUQuota(share float64) (*CPUQuota, error) {
	if share <= 0 || share > 1 {
		return nil, fmt.Errorf("bench: a CPU share of %g is not in (0, 1]", share)
	}
	quota := int64(share * float64(QuotaPeriod/time.Microsecond))
	period := int64(QuotaPeriod / time.Microsecond)
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoQuota, err)
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoQuota, err)
	}
	name := fmt.Sprintf("ferry-bench-%d", os.Getpid())
	var reasons []string
	if root, path, ok := cgroupV1CPU(string(mounts), string(own)); ok {
		dir := filepath.Join(root, path, name)
		files := [][2]string{{"cpu.cfs_period_us", strconv.FormatInt(period, 10)}, {"cpu.cfs_quota_us", strconv.FormatInt(quota, 10)}}
		if err := makeGroup(dir, files); err == nil {
			return &CPUQuota{dir: dir, Method: fmt.Sprintf("cgroup v1 cpu.cfs_quota_us %d of cpu.cfs_period_us %d", quota, period)}, nil
		} else {
			reasons = append(reasons, err.Error())
		}
	}
	if root, path, ok := cgroupV2(string(mounts), string(own)); ok {
		dir := filepath.Join(root, path, name)
		if err := makeGroup(dir, [][2]string{{"cpu.max", fmt.Sprintf("%d %d", quota, period)}}); err == nil {
			return &CPUQuota{dir: dir, Method: fmt.Sprintf("cgroup v2 cpu.max %d %d", quota, period)}, nil
		} else {
			reasons = append(reasons, err.Error())
		}
	}
	if len(reasons) == 0 {
		reasons = append(reasons, "no cgroup v1 cpu or cgroup v2 hierarchy mounted")
	}
	return nil, fmt.Errorf("%w: %s", ErrNoQuota, strings.Join(reasons, "; "))
}

// makeGroup makes the control group dir and writes its files in order;
// on failure it removes what it made.
func makeGroup(dir string, files [][2]string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f[0]), []byte(f[1]), 0o644); err != nil {
			_ = os.Remove(dir)
			return err
		}
	}
	return nil
}

// Add moves the process pid, every thread of it, into the group.
func (q *CPUQuota) Add(pid int) error {
	return os.WriteFile(filepath.Join(q.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
}

// Close removes the group; its processes must have exited.
func (q *CPUQuota) Close() error { return os.Remove(q.dir) }

// cgroupV1CPU finds the cgroup v1 hierarchy with the cpu controller in
// mountinfo (/proc/self/mountinfo) and this process's path in it from
// own (/proc/self/cgroup).
func cgroupV1CPU(mountinfo, own string) (root, path string, ok bool) {
	for _, line := range strings.Split(mountinfo, "\n") {
		fields := strings.Fields(line)
		sep := indexOf(fields, "-")
		if sep < 0 || len(fields) < sep+4 || fields[sep+1] != "cgroup" || !hasOpt(fields[sep+3], "cpu") {
			continue
		}
		root = fields[4]
		break
	}
	if root == "" {
		return "", "", false
	}
	for _, line := range strings.Split(own, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && hasOpt(parts[1], "cpu") {
			return root, parts[2], true
		}
	}
	return "", "", false
}

// cgroupV2 finds the cgroup v2 hierarchy whose cpu controller this
// process's group may give a child: its mount, and this process's path
// in it.
func cgroupV2(mountinfo, own string) (root, path string, ok bool) {
	for _, line := range strings.Split(mountinfo, "\n") {
		fields := strings.Fields(line)
		sep := indexOf(fields, "-")
		if sep >= 0 && len(fields) > sep+1 && fields[sep+1] == "cgroup2" {
			root = fields[4]
			break
		}
	}
	for _, line := range strings.Split(own, "\n") {
		if rest, found := strings.CutPrefix(line, "0::"); found && root != "" {
			controllers, err := os.ReadFile(filepath.Join(root, rest, "cgroup.subtree_control"))
			return root, rest, err == nil && hasOpt(strings.ReplaceAll(strings.TrimSpace(string(controllers)), " ", ","), "cpu")
		}
	}
	return "", "", false
}

func indexOf(xs []string, x string) int {
	for i, s := range xs {
		if s == x {
			return i
		}
	}
	return -1
}

// hasOpt says whether the comma-separated list opts holds opt.
func hasOpt(opts, opt string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

// Quota is the handlers' real run time under a CPU quota at the
// deployer's Lambda's share: the longest invocation of one run of a cell
// (ferry's model, its first seed), in a child process held to
// LambdaCPUShare of one CPU with GOMAXPROCS=1. It counts the in-process
// simulated AWS and S3 answering the handler (they share its process),
// so it is an upper bound.
type Quota struct {
	Method  string  `json:"method"`
	MaxMS   float64 `json:"max_ms"`
	MaxTask string  `json:"max_task"`
}

// QuotaChild is what a child run under the quota does (RunUnderQuota's
// cmd): it runs cell c once with ferry's timing, deploying the previous
// release at its own pace, then writes "ready" on out and waits for a line
// on in (the parent has moved it into the quota's group by then), runs
// the measured release and writes the Quota of it to out, Method left to
// the parent.
func QuotaChild(ctx context.Context, c Cell, opts GridOptions, in io.Reader, out io.Writer) error {
	measuring := func() error {
		if _, err := io.WriteString(out, quotaReady+"\n"); err != nil {
			return err
		}
		if _, err := bufio.NewReader(in).ReadString('\n'); err != nil {
			return fmt.Errorf("bench: the quota child was not put under its quota: %w", err)
		}
		return nil
	}
	m, err := Run(ctx, c, Ferry, Options{CallCost: opts.CallCost, Measuring: measuring})
	if err != nil {
		return err
	}
	return json.NewEncoder(out).Encode(Quota{MaxMS: ms(m.HandlerMax), MaxTask: m.HandlerMaxTask})
}

// quotaReady is the line a QuotaChild writes when what it measures is
// next: only that runs under the quota.
const quotaReady = "ready"

// RunUnderQuota starts cmd (a QuotaChild, its stdin and stdout left to
// RunUnderQuota), moves it into a new CPUQuota of share once it says it
// is ready, lets it go on and reads its Quota. Where no quota can be
// made it fails with ErrNoQuota and cmd is not started.
func RunUnderQuota(ctx context.Context, cmd *exec.Cmd, share float64) (*Quota, error) {
	q, err := NewCPUQuota(share)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	fail := func(err error) (*Quota, error) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, err
	}
	r := bufio.NewReader(stdout)
	if line, err := r.ReadString('\n'); err != nil || strings.TrimSpace(line) != quotaReady {
		return fail(fmt.Errorf("bench: the quota child did not say %q (%q, %v)", quotaReady, line, err))
	}
	if err := q.Add(cmd.Process.Pid); err != nil {
		return fail(fmt.Errorf("bench: move the quota child into its group: %w", err))
	}
	_, _ = io.WriteString(stdin, "go\n")
	_ = stdin.Close()
	rest, err := io.ReadAll(r)
	if err != nil {
		return fail(err)
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("bench: the quota child: %w", err)
	}
	var out Quota
	if err := json.Unmarshal(rest, &out); err != nil {
		return nil, fmt.Errorf("bench: the quota child's output: %w", err)
	}
	out.Method = fmt.Sprintf("%s, GOMAXPROCS=1: real time per invocation", q.Method)
	return &out, nil
}
