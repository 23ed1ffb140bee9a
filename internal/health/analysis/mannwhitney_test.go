package analysis

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMannWhitneyTextbook checks the statistic and its p-values against
// published values.
func TestMannWhitneyTextbook(t *testing.T) {
	// Hollander & Wolfe (1973), permeability constants of the human
	// chorioamnion (the two-sample example of R's wilcox.test): W = 35,
	// one-sided p = 0.1272, exact.
	hwX := []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	hwY := []float64{1.15, 0.88, 0.90, 0.74, 1.21}
	// Conover's ages (SciPy's mannwhitneyu example): U1 = 17, two-sided
	// exact p = 0.1111 (14/126), asymptotic with the continuity
	// correction 0.11134688653314041.
	males := []float64{19, 22, 16, 29, 24}
	females := []float64{20, 11, 17, 12}
	many := func(xs []float64, k int) []float64 { // no ties, beyond maxExact
		var out []float64
		for i := range k {
			for _, v := range xs {
				out = append(out, v+float64(i)*1e-3)
			}
		}
		return out
	}
	tests := []struct {
		name  string
		x, y  []float64
		alt   Alternative
		u, p  float64
		exact bool
	}{
		{"hollander wolfe greater", hwX, hwY, Greater, 35, 0.1272, true},
		{"conover two-sided exact", males, females, TwoSided, 17, 14.0 / 126, true},
		// U = 20, 19, 18, 17 in 1, 1, 2, 3 of the 126 orders (partitions
		// of 0..3): P(U <= 17) = 1 - 4/126.
		{"conover less is the other tail", males, females, Less, 17, 1 - 4.0/126, true},
		// Worked by hand: x = 1 2 2 3 3 3, y = 3 4 4 5 6. Mid-ranks 1,
		// 2.5 2.5, 5.5 (four 3s), 8.5 8.5, 10, 11: R_x = 22.5, U = 22.5 -
		// 21 = 1.5. Ties Σ(t³-t) = 6 + 60 + 6 = 72; Var U = 30/12·(12 -
		// 72/110) = 28.3636; z = (1.5 - 15 + 0.5)/5.3257 = -2.4410; p =
		// Φ(z) = 0.0073239.
		{"ties use the corrected normal", []float64{1, 2, 2, 3, 3, 3}, []float64{3, 4, 4, 5, 6}, Less, 1.5, 0.0073239, false},
		{"all equal is no evidence", []float64{5, 5, 5}, []float64{5, 5}, TwoSided, 3, 1, false},
		{"beyond 49 is approximated", many(males, 10), many(females, 10), TwoSided, 1700, -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MannWhitney(tt.x, tt.y, tt.alt)
			assert.InDelta(t, tt.u, got.U, 1e-9)
			if tt.p >= 0 {
				assert.InDelta(t, tt.p, got.P, 5e-5)
			}
			assert.Equal(t, tt.exact, got.Exact)
		})
	}
	approx := normalP(len(males), len(females), 17, 0, TwoSided)
	assert.InDelta(t, 0.11134688653314041, approx, 1e-12, "the normal approximation of Conover's example")
}

// TestExactCriticalValue checks the exact distribution against the table
// of critical values: for two samples of 10, the largest U significant
// at 0.05 two-sided (0.025 a tail) is 23.
func TestExactCriticalValue(t *testing.T) {
	dist := exactDist(10, 10)
	var cum float64
	for u := 0; u <= 23; u++ {
		cum += dist[u]
	}
	assert.LessOrEqual(t, cum, 0.025, "P(U <= 23)")
	assert.Greater(t, cum+dist[24], 0.025, "P(U <= 24)")
}

// TestExactMatchesEnumeration checks exactDist against a count over
// every way to choose which of m+n ranks are x's.
func TestExactMatchesEnumeration(t *testing.T) {
	for _, c := range [][2]int{{1, 1}, {2, 3}, {4, 4}, {5, 7}, {8, 3}} {
		m, n := c[0], c[1]
		counts := make([]float64, m*n+1)
		var total float64
		for mask := 0; mask < 1<<(m+n); mask++ {
			if popcount(mask) != m {
				continue
			}
			u, ys := 0, 0 // x at rank r beats the y's below it
			for r := range m + n {
				if mask&(1<<r) != 0 {
					u += ys
				} else {
					ys++
				}
			}
			counts[u]++
			total++
		}
		got := exactDist(m, n)
		require.Len(t, got, len(counts))
		for u := range counts {
			assert.InDelta(t, counts[u]/total, got[u], 1e-12, "m=%d n=%d u=%d", m, n, u)
		}
	}
}

// TestNormalNearExact checks the approximation against the exact
// distribution where both apply and it is known to be close (40 and 40).
func TestNormalNearExact(t *testing.T) {
	for _, u := range []float64{500, 650, 800, 1000} {
		for _, alt := range []Alternative{TwoSided, Greater, Less} {
			assert.InDelta(t, exactP(40, 40, u, alt), normalP(40, 40, u, 0, alt), 0.005, "u=%v alt=%v", u, alt)
		}
	}
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// FuzzMannWhitney checks what holds for any two samples: U within
// [0, m·n], p within [0, 1], swapping the samples mirrors U and the
// one-sided alternatives and keeps the two-sided p-value.
func FuzzMannWhitney(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(4))
	f.Add([]byte{5, 5, 5, 5, 5, 5}, uint8(2))
	f.Add(make([]byte, 200), uint8(60))
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		var xs []float64
		for len(data) >= 2 && len(xs) < 160 {
			xs = append(xs, float64(binary.LittleEndian.Uint16(data))/64)
			data = data[2:]
		}
		k := int(split)
		if k == 0 || k >= len(xs) {
			return
		}
		x, y := xs[:k], xs[k:]
		mn := float64(len(x) * len(y))
		for _, alt := range []Alternative{TwoSided, Greater, Less} {
			a := MannWhitney(x, y, alt)
			require.False(t, math.IsNaN(a.P))
			require.GreaterOrEqual(t, a.U, 0.0)
			require.LessOrEqual(t, a.U, mn)
			require.GreaterOrEqual(t, a.P, 0.0)
			require.LessOrEqual(t, a.P, 1.0)
			mirror := map[Alternative]Alternative{TwoSided: TwoSided, Greater: Less, Less: Greater}[alt]
			b := MannWhitney(y, x, mirror)
			require.InDelta(t, mn, a.U+b.U, 1e-9)
			require.InDelta(t, a.P, b.P, 1e-9)
		}
	})
}
