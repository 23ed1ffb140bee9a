package analysis

import (
	"math"
	"slices"
)

// Alternative is the hypothesis a Mann-Whitney test weighs against "both
// samples come from one distribution".
type Alternative int

// Alternatives.
const (
	// TwoSided: x tends to differ from y, either way.
	TwoSided Alternative = iota
	// Greater: x tends to be greater than y.
	Greater
	// Less: x tends to be less than y.
	Less
)

// maxExact is the largest sample, on either side, whose p-value is
// computed exactly (as R's wilcox.test does below 50): the exact
// distribution takes O(len(x)·len(y)·len(x)·len(y)) steps.
const maxExact = 49

// Test is the outcome of a Mann-Whitney U test.
type Test struct {
	// U is x's statistic: the pairs (x[i], y[j]) with x[i] > y[j], a tie
	// counting one half. y's is len(x)·len(y) - U.
	U float64
	// P is the p-value of the test's alternative, 0 to 1.
	P float64
	// Exact says P is from U's exact distribution (no ties, both
	// samples at most 49), not the normal approximation.
	Exact bool
}

// MannWhitney tests samples x and y (neither empty; each finite) against
// alt. Without ties and with both samples at most 49 long the p-value is
// exact; otherwise it is the normal approximation of U, its variance
// corrected for ties (Σ(t³-t) over the groups of t equal values) and its
// distance to the mean corrected by one half for continuity, as R's
// wilcox.test computes it. When every value is equal the p-value is 1.
func MannWhitney(x, y []float64, alt Alternative) Test {
	m, n := len(x), len(y)
	u, ties := statistic(x, y)
	if ties == 0 && m <= maxExact && n <= maxExact {
		return Test{U: u, P: exactP(m, n, u, alt), Exact: true}
	}
	return Test{U: u, P: normalP(m, n, u, ties, alt)}
}

// statistic is x's U from the mid-ranks of x and y pooled, and Σ(t³-t)
// over the groups of t tied values (0 without ties).
func statistic(x, y []float64) (u, ties float64) {
	type obs struct {
		v   float64
		inX bool
	}
	all := make([]obs, 0, len(x)+len(y))
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(a, b obs) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	var rankX float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		mid := float64(i+j+1) / 2 // ranks i+1..j, mean
		for k := i; k < j; k++ {
			if all[k].inX {
				rankX += mid
			}
		}
		if t := float64(j - i); t > 1 {
			ties += t*t*t - t
		}
		i = j
	}
	m := float64(len(x))
	return rankX - m*(m+1)/2, ties
}

// exactP is the p-value of U = u for samples of m and n without ties,
// from U's exact distribution (exactCDF): P(U ≥ u) for Greater, P(U ≤ u)
// for Less, twice the smaller of the two (at most 1) for TwoSided.
func exactP(m, n int, u float64, alt Alternative) float64 {
	dist := exactDist(m, n)
	k := int(math.Round(u))
	var below, above float64 // P(U ≤ k), P(U ≥ k)
	for i, p := range dist {
		if i <= k {
			below += p
		}
		if i >= k {
			above += p
		}
	}
	switch alt {
	case Greater:
		return clamp01(above)
	case Less:
		return clamp01(below)
	}
	return clamp01(2 * min(below, above))
}

// exactDist is the distribution of U for samples of m and n drawn from
// one continuous distribution: dist[u] = P(U = u), u from 0 to m·n. It
// follows the largest of the m+n values: it is one of x's with
// probability m/(m+n), and then beats all n of y's, else one of y's,
// beating none: p(m, n, u) = m/(m+n)·p(m-1, n, u-n) + n/(m+n)·p(m, n-1, u),
// with p(0, n, 0) = p(m, 0, 0) = 1. Rows of i = 0..m are kept one at a
// time, each over j = 0..n.
func exactDist(m, n int) []float64 {
	prev := make([][]float64, n+1) // row i-1
	for j := range prev {
		prev[j] = []float64{1} // i = 0: U is 0
	}
	for i := 1; i <= m; i++ {
		cur := make([][]float64, n+1)
		cur[0] = []float64{1} // j = 0: U is 0
		for j := 1; j <= n; j++ {
			d := make([]float64, i*j+1)
			a, b := float64(i)/float64(i+j), float64(j)/float64(i+j)
			for u, p := range prev[j] { // x's largest: +j
				d[u+j] += a * p
			}
			for u, p := range cur[j-1] {
				d[u] += b * p
			}
			cur[j] = d
		}
		prev = cur
	}
	return prev[n]
}

// normalP is the p-value of U = u for samples of m and n, ties being
// Σ(t³-t) over the groups of ties, from the normal approximation with
// the continuity correction (see MannWhitney).
func normalP(m, n int, u, ties float64, alt Alternative) float64 {
	mn, total := float64(m*n), float64(m+n)
	variance := mn / 12 * ((total + 1) - ties/(total*(total-1)))
	if !(variance > 0) {
		return 1
	}
	sd, d := math.Sqrt(variance), u-mn/2
	switch alt {
	case Greater:
		return clamp01(upper((d - 0.5) / sd))
	case Less:
		return clamp01(1 - upper((d+0.5)/sd))
	}
	if d != 0 {
		d -= math.Copysign(0.5, d)
	}
	return clamp01(2 * upper(math.Abs(d)/sd))
}

// upper is P(Z > z) for a standard normal Z.
func upper(z float64) float64 { return math.Erfc(z/math.Sqrt2) / 2 }

// clamp01 is p within [0, 1] (sums of floating point probabilities can
// pass 1 by a rounding).
func clamp01(p float64) float64 { return max(0, min(1, p)) }
