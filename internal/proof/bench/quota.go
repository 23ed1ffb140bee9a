package bench

import (
	"context"
	"errors"
	"fmt"
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
// deployer's Lambda's share: the longest invocation of the measured
// release of one run of a cell (ferry's model, its first seed), its
// tasks run in a handler process (ServeHandler) held to LambdaCPUShare of
// one CPU with GOMAXPROCS=1. The region, its simulated AWS and S3 answer
// the handler from the parent process, outside the quota, as AWS answers
// a Lambda; the handler's calls to them cross HTTP on a loopback
// listener, the handler's side of each (building, sending, reading and
// parsing) counted in its time, the time the parent took to answer not
// (the region says it on each answer: servedHeader).
type Quota struct {
	Method  string  `json:"method"`
	MaxMS   float64 `json:"max_ms"`
	MaxTask string  `json:"max_task"`
}

// QuotaMeasures says what a Quota's time is, for its Method: which
// services the handler reaches in AWS's wire format, with the SDK's own
// clients, and which with their input and output as JSON.
var QuotaMeasures = "real time per invocation of the handler alone in its process, but for the time it waited for " +
	"the simulated AWS, S3 and Step Functions to answer it over loopback HTTP from outside the quota " +
	"(AWS's side on a Lambda, whose latency the model counts as each call's cost), " +
	"and never less than its process's CPU time at the share (work done while a call was out still takes the share's time); " +
	"it calls " + andList(append([]string{"S3", "Step Functions"}, wireNames()...)) + " with the SDK's own clients in AWS's wire format " +
	"(requests built and signed, AWS's answers parsed), and " + andList(jsonServices) +
	" with the SDK's input and output types as JSON"

// quotaReady is the line a handler process writes once it is built:
// what runs after it runs under the quota.
const quotaReady = "ready"

// RunUnderQuota runs cell c once with ferry's timing, the previous
// release in-process, the measured release's tasks in the handler process
// command starts (given the region's URL; its stdin and stdout left to
// RunUnderQuota), moved into a new CPUQuota of share once it says it is
// ready, and returns the measured release's longest invocation. Where no
// quota can be made it fails with ErrNoQuota and nothing runs.
func RunUnderQuota(ctx context.Context, c Cell, opts GridOptions, command func(endpoint string) *exec.Cmd, share float64) (*Quota, error) {
	q, err := NewCPUQuota(share)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	var h *handlerProcess
	remote := func(endpoint string) (Handler, error) {
		var err error
		h, err = startHandler(command(endpoint), q)
		return h, err
	}
	m, err := Run(ctx, c, Ferry, Options{CallCost: opts.CallCost, Remote: remote})
	if h != nil {
		if cerr := h.close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return nil, err
	}
	return &Quota{
		Method: fmt.Sprintf("%s, GOMAXPROCS=1: %s; the longest: %gms of the handler process's CPU, %gms at the share, and %gms more waiting for the answers",
			q.Method, QuotaMeasures, ms(m.HandlerMaxCPU), ms(OnLambda(m.HandlerMaxCPU)), ms(m.HandlerMaxWaited)),
		MaxMS:   ms(m.HandlerMax),
		MaxTask: m.HandlerMaxTask,
	}, nil
}
