// Package analysis owns automated canary analysis: the judgement of
// whether a release's new groups behave worse than the groups they
// replace, from samples of the same metrics taken over the same kind of
// window, as Kayenta's default judge makes it.
//
// For each metric it runs a Mann-Whitney U test (MannWhitney: the
// Wilcoxon rank-sum test) of the new groups' samples against the
// previous groups': one-sided in the direction the metric is worse in
// (DirectionHigher: higher is worse; DirectionLower: lower is worse), or
// two-sided when either way is (DirectionEither). The p-value is exact
// for small samples without ties and otherwise comes from the normal
// approximation with the tie correction and a continuity correction. A
// metric is VerdictHigh (or VerdictLow) when the difference is
// significant (p below Alpha) and larger than its tolerance (the mean of
// the new samples beyond the previous mean by more than that fraction:
// Kayenta's effect size), VerdictNoData when either side has no sample
// or the new side fewer than MinSamples, too few for any difference to
// reach Alpha (a canary that could not have failed has not passed), else
// VerdictPass. The overall score is the share of the metrics with
// data that pass, 0 to 100 (Kayenta's weighted-sum scorer with one
// group); it classifies as ClassPass at or above the pass threshold,
// ClassMarginal at or above the marginal one, else ClassFail, and as
// ClassNoData when no metric has data.
//
// It is pure: callers read the samples (the deployer, from CloudWatch's
// GetMetricData) and decide what a classification does.
package analysis
