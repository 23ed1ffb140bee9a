package bench

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/tuning"
)

var update = flag.Bool("update", false, "rewrite internal/proof/bench/testdata/performance.golden")

// pageReport is a whole report of synthetic figures, fixed where a run
// would vary.
func pageReport(mutate func(*CellResult)) *Report {
	long := &Long{HistoryEvents: 14_000, AddedLatencyS: Dist{Median: 5, P95: 12, Max: 13, Seeds: 20}}
	multi := &Multi{Deploys: 100, Services: 10, Succeeded: 97, DescribeTargetHealthPerS: 6, DescribeASGPerS: 7, MaxCallsInASecond: 30, BusiestBucket: "Auto Scaling"}
	follow := &Follow{Polls: 40, MeanBytes: 3000, MaxBytesInLoop: 9000, MaxBytes: 24000, CallsPerSecondWaiting: 0.17}
	r := NewReport(grid(mutate), GridOptions{Seeds: 20}, long, multi, follow, &Binary{Bytes: 13 << 20}, &Uploads{FirstAssetBytes: 70, Method: "in-process"})
	r.GoVersion, r.Platform, r.CPUs = "go1.x", "linux/arm64", 2
	return r
}

// TestMarkdownGolden: the performance section is generated from the
// report alone (refresh with -update).
func TestMarkdownGolden(t *testing.T) {
	var md strings.Builder
	require.NoError(t, pageReport(nil).Markdown(&md))
	golden := filepath.Join("testdata", "performance.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(md.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), md.String())
}

// TestMarkdownFiguresFromTheReport: the section's figures of the deploy
// of 50 services of 100 instances are the report's (its added latency,
// its whole time against its floor, the handlers' time on the Lambda and
// how it was measured), every column says what it is and where it comes
// from, what AWS documents of the alternatives is cited, and every
// target not met is named with what was measured.
func TestMarkdownFiguresFromTheReport(t *testing.T) {
	r := pageReport(func(c *CellResult) {
		if c.Services == 50 && c.Instances == 100 {
			c.AddedLatencyS = Dist{Min: 1.11, Median: 2.22, P95: 3.33, Max: 4.44, Seeds: 20}
			c.WholeS = Dist{Min: 171.1, Median: 172.2, Max: 173.3, Seeds: 20}
			c.FloorS = Dist{Min: 161.1, Median: 162.2, Max: 163.3, Seeds: 20}
			c.OverFloorS = Dist{Min: 9.1, Median: 9.2, P95: 9.3, Max: 9.4, Seeds: 20}
			c.UnderQuota(&Quota{Method: "cgroup v1 cpu.cfs_quota_us 28942 of cpu.cfs_period_us 100000, GOMAXPROCS=1", MaxMS: 654.3, MaxTask: "CleanUpSuccess"})
		}
	})
	var b strings.Builder
	require.NoError(t, r.Markdown(&b))
	md := b.String()
	for _, want := range []string{
		"1.11 / 2.22 / 4.44 s of latency", "95th percentile 3.33 s", "171.1 / 172.2 / 173.3 s against its physical floor",
		"161.1 / 162.2 / 163.3 s: 9.1 / 9.2 / 9.4 s more", "654.3 ms on the Lambda's CPU share (CleanUpSuccess, cgroup v1 cpu.cfs_quota_us",
		"against ferry's whole deploy of a median 172.2 s",
		RefreshDefaultsDoc, RefreshHowDoc, CodeDeployBlueGreenDoc, CodeDeployTerminationDoc,
		"minimum healthy 90%", "10 at a time, so 10 rounds",
		"`over_floor_s50_n100`: wants", "`multi_project`: wants",
		"`aws-documented`", "Auto Scaling, every action (one bucket)",
		fmt.Sprintf("at most %d load balancer reads", tuning.BalancerReadsPerCheck),
	} {
		assert.Contains(t, md, want)
	}
	for _, col := range columns {
		assert.NotEmpty(t, col.what, col.head)
		assert.NotEmpty(t, col.kind, col.head)
	}
	for _, col := range columns[2:] {
		assert.Contains(t, md, "- **"+col.head+"** ("+string(col.kind)+"): ", "the legend names %s", col.head)
	}

	met := pageReport(nil)
	met.Targets = slices.DeleteFunc(met.Targets, func(t Target) bool { return t.Status == Fail })
	b.Reset()
	require.NoError(t, met.Markdown(&b))
	assert.NotContains(t, b.String(), "Not met")
	assert.Contains(t, b.String(), "Every target measured is met.")
}

// TestPerformancePageHasNoHandCopiedFigures: outside the section make
// bench generates, the performance page holds no figure (a digit), so
// none goes stale when the benchmark runs again.
func TestPerformancePageHasNoHandCopiedFigures(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "..", filepath.FromSlash(PerformancePage)))
	require.NoError(t, err)
	begin, end := strings.Index(string(page), PageBegin), strings.Index(string(page), PageEnd)
	require.True(t, begin >= 0 && end > begin)
	outside := string(page[:begin]) + string(page[end+len(PageEnd):])
	assert.Empty(t, regexp.MustCompile(`[^\n]*[0-9][^\n]*`).FindAllString(outside, -1), "lines with figures outside the generated section")
}

// TestCheckReads: a health check's calls are its reads; the event that
// announces a healthy release (once a deploy) counts in the deploy's
// calls, not in the check's, so the costliest check does not depend on
// whether the last check, at N=100 more often a full one, announces.
func TestCheckReads(t *testing.T) {
	rec := &recorder{}
	rec.begin(Cell{Services: 50, Instances: 100})
	rec.on = true
	ops := map[string]int{"elbv2:DescribeTargetHealth": 20, "s3:GetObject": 3, "autoscaling:DescribeAutoScalingGroups": 1, "elbv2:DescribeTargetGroups": 1, "eventbridge:PutEvents": 1}
	rec.count(execution.TaskCheckHealthy, ops, 23, 3, Invocation{}, 0)
	m := rec.m
	assert.Equal(t, []int{25}, m.CheckCalls)
	assert.NotContains(t, m.FullCheckByOp, "eventbridge:PutEvents")
	assert.Equal(t, 1, m.ByOp["eventbridge:PutEvents"], "in the deploy's calls")
	assert.Equal(t, 26, m.AWSCalls+m.S3Calls)
}

// TestCgroupMounts: the cpu controller's cgroup v1 hierarchy and this
// process's group in it are found from /proc/self/mountinfo and
// /proc/self/cgroup; without one, none.
func TestCgroupMounts(t *testing.T) {
	mountinfo := "35 25 0:30 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n" +
		"36 25 0:31 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n" +
		"40 25 0:35 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
	own := "4:memory:/a/b\n1:cpu:/bench\n0::/\n"
	root, path, ok := cgroupV1CPU(mountinfo, own)
	assert.True(t, ok)
	assert.Equal(t, "/sys/fs/cgroup/cpu", root)
	assert.Equal(t, "/bench", path)
	_, _, ok = cgroupV1CPU("40 25 0:35 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "0::/x\n")
	assert.False(t, ok)
	root, path, _ = cgroupV2("40 25 0:35 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "0::/x\n")
	assert.Equal(t, "/sys/fs/cgroup", root)
	assert.Equal(t, "/x", path)
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
