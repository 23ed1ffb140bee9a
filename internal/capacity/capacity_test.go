package capacity

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr(v int) *int { return &v }

func TestCompute(t *testing.T) {
	tests := []struct {
		name     string
		bounds   Bounds
		previous *int
		want     Plan
	}{
		// The seed's example: min 3, max 5, spread 0.2.
		{"seed new service", Bounds{MinSize: 3, MaxSize: 5, Spread: 0.2}, nil, Plan{Desired: 3, Launch: 4, Healthy: 3}},
		{"seed previous at max", Bounds{MinSize: 3, MaxSize: 5, Spread: 0.2}, ptr(5), Plan{Desired: 5, Launch: 5, Healthy: 4}},
		{"seed previous at 4", Bounds{MinSize: 3, MaxSize: 5, Spread: 0.2}, ptr(4), Plan{Desired: 4, Launch: 5, Healthy: 4}},
		{"previous above max is bounded", Bounds{MinSize: 3, MaxSize: 5, Spread: 0.2}, ptr(9), Plan{Desired: 5, Launch: 5, Healthy: 4}},
		{"previous below min is bounded", Bounds{MinSize: 3, MaxSize: 5, Spread: 0.2}, ptr(1), Plan{Desired: 3, Launch: 4, Healthy: 3}},
		{"previous scaled to zero", Bounds{MinSize: 0, MaxSize: 5, Spread: 0.2}, ptr(0), Plan{Desired: 0, Launch: 0, Healthy: 0}},
		{"defaults one instance", Bounds{MinSize: 1, MaxSize: 1}, nil, Plan{Desired: 1, Launch: 1, Healthy: 1}},
		{"spread zero requires all", Bounds{MinSize: 1, MaxSize: 20}, ptr(10), Plan{Desired: 10, Launch: 10, Healthy: 10}},
		{"spread rounds launch up", Bounds{MinSize: 1, MaxSize: 100, Spread: 0.1}, ptr(11), Plan{Desired: 11, Launch: 13, Healthy: 10}},
		{"float error 5*0.8", Bounds{MinSize: 1, MaxSize: 10, Spread: 0.2}, ptr(5), Plan{Desired: 5, Launch: 6, Healthy: 4}},
		{"float error 10*1.1", Bounds{MinSize: 1, MaxSize: 100, Spread: 0.1}, ptr(10), Plan{Desired: 10, Launch: 11, Healthy: 9}},
		{"healthy never below min", Bounds{MinSize: 4, MaxSize: 10, Spread: 0.5}, ptr(5), Plan{Desired: 5, Launch: 8, Healthy: 4}},
		{"large spread", Bounds{MinSize: 1, MaxSize: 1000, Spread: 0.9}, ptr(100), Plan{Desired: 100, Launch: 190, Healthy: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Compute(tt.bounds, tt.previous)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, got.Healthy, got.Desired)
			assert.LessOrEqual(t, got.Desired, got.Launch)
			assert.LessOrEqual(t, got.Launch, tt.bounds.MaxSize)
			assert.GreaterOrEqual(t, got.Healthy, tt.bounds.MinSize)
		})
	}
}

func TestComputeInvalid(t *testing.T) {
	tests := []struct {
		name   string
		bounds Bounds
		want   string
	}{
		{"negative min", Bounds{MinSize: -1, MaxSize: 1}, "min_size -1 is negative"},
		{"max below min", Bounds{MinSize: 3, MaxSize: 2}, "max_size 2 is below min_size 3"},
		{"spread one", Bounds{MinSize: 1, MaxSize: 2, Spread: 1}, "spread 1 is outside [0, 1)"},
		{"negative spread", Bounds{MinSize: 1, MaxSize: 2, Spread: -0.1}, "spread -0.1 is outside [0, 1)"},
		{"negative max_terms", Bounds{MinSize: 1, MaxSize: 2, MaxTerms: -1}, "max_terms -1 is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compute(tt.bounds, nil)
			require.Error(t, err)
			assert.EqualError(t, err, tt.want)
		})
	}
}

func TestShouldHalt(t *testing.T) {
	tests := []struct {
		maxTerms, terminating int
		want                  bool
	}{
		{0, 0, false},
		{0, 1, true},
		{1, 1, false},
		{1, 2, true},
		{3, 2, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Bounds{MinSize: 1, MaxSize: 1, MaxTerms: tt.maxTerms}.ShouldHalt(tt.terminating),
			"max_terms %d terminating %d", tt.maxTerms, tt.terminating)
	}
}

func FuzzCompute(f *testing.F) {
	f.Add(3, 5, 0.2, 4, true)
	f.Add(0, 0, 0.0, 0, false)
	f.Fuzz(func(t *testing.T, minSize, maxSize int, spread float64, previous int, hasPrevious bool) {
		b := Bounds{MinSize: minSize % 2000, MaxSize: maxSize % 2000, Spread: spread}
		var prev *int
		if hasPrevious {
			prev = &previous
		}
		got, err := Compute(b, prev)
		if err != nil {
			return
		}
		if got.Healthy > got.Desired || got.Desired > got.Launch || got.Launch > b.MaxSize || got.Healthy < b.MinSize {
			t.Fatalf("bounds %+v previous %v: plan %+v breaks the invariants", b, prev, got)
		}
	})
}

func TestStages(t *testing.T) {
	n := func(v int) Step { return Step{N: v} }
	pc := func(v int) Step { return Step{N: v, Percent: true} }
	cases := []struct {
		name  string
		b     Bounds
		prev  int
		steps []Step
		want  []Stage
	}{
		{"no rollout: all at once", Bounds{MinSize: 2, MaxSize: 10}, 4, nil, []Stage{{4, 4, 2}}},
		{"one, a quarter, all", Bounds{MinSize: 2, MaxSize: 20}, 8, []Step{n(1), pc(25), pc(100)},
			[]Stage{{1, 1, 1}, {2, 2, 2}, {8, 8, 2}}},
		{"a percentage rounds up", Bounds{MinSize: 1, MaxSize: 10}, 3, []Step{pc(10), pc(50), pc(100)},
			[]Stage{{1, 1, 1}, {2, 2, 1}, {3, 3, 1}}},
		{"a step no larger than the one before is left out", Bounds{MinSize: 1, MaxSize: 10}, 3, []Step{n(1), pc(10), pc(100)},
			[]Stage{{1, 1, 1}, {3, 3, 1}}},
		{"a step as large as the group is the last", Bounds{MinSize: 1, MaxSize: 10}, 2, []Step{n(1), n(2), n(5), pc(100)},
			[]Stage{{1, 1, 1}, {2, 2, 1}}},
		{"the spread: launched more, healthy fewer", Bounds{MinSize: 1, MaxSize: 20, Spread: 0.2}, 10, []Step{n(5), pc(100)},
			[]Stage{{5, 4, 1}, {12, 8, 1}}},
		{"a stage never asks more healthy than the whole", Bounds{MinSize: 1, MaxSize: 20, Spread: 0.2}, 8, []Step{n(9), pc(100)},
			[]Stage{{9, 7, 1}, {10, 7, 1}}},
		{"a group of one has nothing to step", Bounds{MinSize: 1, MaxSize: 1}, 1, []Step{n(1), pc(50), pc(100)},
			[]Stage{{1, 1, 1}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Compute(tc.b, &tc.prev)
			require.NoError(t, err)
			got := p.Stages(tc.b, tc.steps)
			assert.Equal(t, tc.want, got)
			last := got[len(got)-1]
			assert.Equal(t, Stage{p.Launch, p.Healthy, tc.b.MinSize}, last, "the last stage is the whole plan")
			for i := 1; i < len(got); i++ {
				assert.Greater(t, got[i].Launch, got[i-1].Launch, "every stage launches more than the one before")
				assert.LessOrEqual(t, got[i-1].Healthy, last.Healthy)
				assert.LessOrEqual(t, got[i-1].MinSize, got[i-1].Launch)
			}
		})
	}
}
