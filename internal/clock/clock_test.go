package clock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestVirtualNeverGoesBack(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		step func(*Virtual)
		want time.Time
	}{
		{"advance", func(v *Virtual) { v.Advance(time.Minute) }, start.Add(time.Minute)},
		{"negative advance ignored", func(v *Virtual) { v.Advance(-time.Minute) }, start},
		{"set forward", func(v *Virtual) { v.Set(start.Add(time.Hour)) }, start.Add(time.Hour)},
		{"set backward ignored", func(v *Virtual) { v.Set(start.Add(-time.Hour)) }, start},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NewVirtual(start)
			tt.step(v)
			assert.Equal(t, tt.want, v.Now())
		})
	}
}
