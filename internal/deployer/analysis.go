package deployer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/ferryhq/ferry/internal/cloud"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/health/analysis"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/release"
)

// metricReader is the CloudWatch call the canary analysis makes.
type metricReader interface {
	GetMetricData(ctx context.Context, in *cloudwatch.GetMetricDataInput, optFns ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error)
}

var _ metricReader = (*cloudwatch.Client)(nil)

// comparison is one service's groups: its new group, and its previous
// groups (those of other releases when Deploy ran, State.Previous).
type comparison struct {
	service  string
	group    string
	previous []string
}

// comparisons are the services of r that have a previous group, sorted:
// a new service has nothing to be compared with.
func comparisons(st *execution.State, r *release.Release) []comparison {
	var out []comparison
	for _, svc := range r.ServiceNames() {
		c := comparison{service: svc, group: naming.GroupName(r.ProjectName, r.ConfigName, svc, r.ReleaseID)}
		prefix := naming.GroupPrefix(r.ProjectName, r.ConfigName) + svc + "/"
		for _, name := range st.Previous {
			if rest, ok := strings.CutPrefix(name, prefix); ok && !strings.Contains(rest, "/") && name != c.group && !slices.Contains(c.previous, name) {
				c.previous = append(c.previous, name)
			}
		}
		if len(c.previous) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// analyze is the release's canary analysis at now (release.Analysis):
// each service's new group against its previous groups, on the samples
// of the last window of whole periods; the previous groups' window ends
// at baselineEnd instead (the bake: when they stood by). It records the
// judgement (ledger.PutAnalysis) and returns it; nil without an
// analysis or a service to compare. A failing score is a
// *failure.HaltError naming the service and its worse metrics (the
// alarm path: a rollback); a read that fails is classified (transient:
// retryable; throttled: cloud.Throttled), never a pass.
func (d *Deployer) analyze(ctx context.Context, api metricReader, st *execution.State, r *release.Release, now, baselineEnd time.Time, bake bool) (*execution.Analysis, error) {
	a := r.Analysis
	pairs := comparisons(st, r)
	if a == nil || len(pairs) == 0 {
		return nil, nil
	}
	period := time.Duration(a.PeriodSeconds) * time.Second
	span := time.Duration(a.WindowSeconds) * time.Second
	end := now.Truncate(period)
	var news, olds []string
	for _, p := range pairs {
		news = append(news, p.group)
		olds = append(olds, p.previous...)
	}
	base := baselineEnd.Truncate(period)
	if base.Equal(end) {
		news, olds = append(news, olds...), nil
	}
	samples, err := readSamples(ctx, api, a, news, end.Add(-span), end)
	if err == nil && olds != nil {
		var more map[string][][]float64
		more, err = readSamples(ctx, api, a, olds, base.Add(-span), base)
		for g, s := range more {
			samples[g] = s
		}
	}
	if err != nil {
		return nil, err
	}
	j := judgeServices(a, pairs, samples)
	j.At, j.Bake = now, bake
	if err := d.ledger.PutAnalysis(ctx, st.ProjectName, st.ConfigName, st.ReleaseID, *j); err != nil {
		return nil, err
	}
	d.log.Info("canary analysis", "release_id", st.ReleaseID, "service", j.Service, "score", j.Report.Score, "class", string(j.Report.Class), "bake", bake)
	if j.Report.Class == analysis.ClassFail {
		return j, &failure.HaltError{Reason: analysisReason(a, j)}
	}
	return j, nil
}

// readSamples reads every metric of a for each group over [start, end)
// in periods of a.PeriodSeconds: by group, each metric's datapoints, in
// a's order. One GetMetricData per limits.GetMetricDataQueries queries,
// paged with NextToken: a window of at most limits.MaxAnalysisWindow in
// one-minute periods is 60 datapoints a query, 30,000 a call, inside the
// 100,800 a call returns before it pages (MaxDatapoints). The calls go
// one after the other, far inside GetMetricData's quota of transactions
// a second (CloudWatch service quotas); a throttled call is a throttled
// check (throttled).
func readSamples(ctx context.Context, api metricReader, a *release.Analysis, groups []string, start, end time.Time) (map[string][][]float64, error) {
	type key struct{ group, metric int }
	var keys []key
	for g := range groups {
		for m := range a.Metrics {
			keys = append(keys, key{g, m})
		}
	}
	out := map[string][][]float64{}
	for _, g := range groups {
		out[g] = make([][]float64, len(a.Metrics))
	}
	for batch := range slices.Chunk(keys, limits.GetMetricDataQueries) {
		in := &cloudwatch.GetMetricDataInput{StartTime: aws.Time(start), EndTime: aws.Time(end)}
		for i, k := range batch {
			m := a.Metrics[k.metric]
			in.MetricDataQueries = append(in.MetricDataQueries, cwtypes.MetricDataQuery{
				Id: aws.String(fmt.Sprintf("q%d", i)), ReturnData: aws.Bool(true),
				MetricStat: &cwtypes.MetricStat{Period: aws.Int32(int32(a.PeriodSeconds)), Stat: aws.String(m.Stat),
					Metric: &cwtypes.Metric{Namespace: aws.String(m.Namespace), MetricName: aws.String(m.Name),
						Dimensions: []cwtypes.Dimension{{Name: aws.String("AutoScalingGroupName"), Value: aws.String(groups[k.group])}}}},
			})
		}
		for p := cloudwatch.NewGetMetricDataPaginator(api, in); p.HasMorePages(); {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, cloud.ClassifyAs("cloudwatch:GetMetricData", err, failure.AsDeploy)
			}
			for _, res := range page.MetricDataResults {
				var i int
				if _, err := fmt.Sscanf(aws.ToString(res.Id), "q%d", &i); err != nil || i < 0 || i >= len(batch) {
					return nil, &failure.DeployError{Op: "cloudwatch:GetMetricData", Err: fmt.Errorf("a result for no query: %q", aws.ToString(res.Id))}
				}
				if err := resultError(res); err != nil {
					return nil, err
				}
				k := batch[i]
				out[groups[k.group]][k.metric] = append(out[groups[k.group]][k.metric], res.Values...)
			}
		}
	}
	return out, nil
}

// resultError is what a result's status says of its data: nothing for
// Complete and PartialData (the next page has the rest), else the
// samples cannot be trusted: InternalError is transient (retryable),
// Forbidden is not (CloudWatch API Reference, MetricDataResult).
func resultError(res cwtypes.MetricDataResult) error {
	switch res.StatusCode {
	case cwtypes.StatusCodeComplete, cwtypes.StatusCodePartialData, "":
		return nil
	case cwtypes.StatusCodeInternalError:
		return &failure.RetryableError{Op: "cloudwatch:GetMetricData", Err: errors.New("a query's result is InternalError")}
	}
	return &failure.DeployError{Op: "cloudwatch:GetMetricData", Err: fmt.Errorf("a query's result is %s", res.StatusCode)}
}

// judgeServices judges each service's new group against its previous
// groups (analysis.Judge) and returns the judgement of the worst
// (worse), with every judged service's score.
func judgeServices(a *release.Analysis, pairs []comparison, samples map[string][][]float64) *execution.Analysis {
	var out *execution.Analysis
	scores := map[string]float64{}
	for _, p := range pairs {
		metrics := make([]analysis.Metric, len(a.Metrics))
		for i, m := range a.Metrics {
			metrics[i] = analysis.Metric{Name: m.Label(), Direction: analysis.Direction(m.Direction), Tolerance: *m.Tolerance,
				New: samples[p.group][i]}
			for _, g := range p.previous {
				metrics[i].Previous = append(metrics[i].Previous, samples[g][i]...)
			}
		}
		rep := analysis.Judge(metrics, a.Thresholds())
		if rep.Class != analysis.ClassNoData {
			scores[p.service] = rep.Score
		}
		if out == nil || worse(rep, out.Report) {
			out = &execution.Analysis{Service: p.service, Report: rep}
		}
	}
	if len(scores) > 0 {
		out.Scores = scores
	}
	return out
}

// severity orders classes from the worst.
var severity = map[analysis.Class]int{analysis.ClassFail: 0, analysis.ClassMarginal: 1, analysis.ClassNoData: 2, analysis.ClassPass: 3}

// worse reports whether a is a worse judgement than b: a worse class,
// else a lower score (the first of equals stays).
func worse(a, b analysis.Report) bool {
	return cmp.Or(cmp.Compare(severity[a.Class], severity[b.Class]), cmp.Compare(a.Score, b.Score)) < 0
}

// analysisReason says why a failing analysis rolls the release back: the
// service, its score and threshold, and each metric that is worse.
func analysisReason(a *release.Analysis, j *execution.Analysis) string {
	var worse []string
	for _, m := range j.Report.Metrics {
		if m.Verdict == analysis.VerdictHigh || m.Verdict == analysis.VerdictLow {
			worse = append(worse, fmt.Sprintf("%s %s (mean %.4g over %d samples against %.4g over %d samples, p=%.2g)",
				m.Name, m.Verdict, m.NewMean, m.NewSamples, m.PreviousMean, m.PreviousSamples, m.PValue))
		}
	}
	return fmt.Sprintf("service %s: canary analysis scored %.0f, below its marginal_score of %g: %s",
		j.Service, j.Report.Score, *a.MarginalScore, strings.Join(worse, "; "))
}
