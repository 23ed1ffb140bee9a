package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/proof/bench"
)

func TestParseCells(t *testing.T) {
	tests := []struct {
		in      string
		want    []bench.Cell
		wantErr bool
	}{
		{in: "", want: bench.Grid()},
		{in: "none", want: nil},
		{in: "1x1", want: []bench.Cell{{Services: 1, Instances: 1}}},
		{in: "1x1, 50x100", want: []bench.Cell{{Services: 1, Instances: 1}, {Services: 50, Instances: 100}}},
		{in: "0x1", wantErr: true},
		{in: "1x0", wantErr: true},
		{in: "1", wantErr: true},
		{in: "1x1x1", wantErr: true},
		{in: "1x1,", wantErr: true},
		{in: "ax1", wantErr: true},
		{in: "1x1 end", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseCells(tt.in)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func FuzzParseCells(f *testing.F) {
	for _, s := range []string{"", "1x1", "1x1,50x100", "0x1", "1x1 end", "-1x2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cells, err := parseCells(s)
		if err != nil {
			return
		}
		for _, c := range cells {
			assert.Positive(t, c.Services)
			assert.Positive(t, c.Instances)
		}
	})
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"-cells", "x"}, {"extra"}, {"-nope"}} {
		var out, errOut bytes.Buffer
		assert.Equal(t, 2, run(context.Background(), args, &out, &errOut), args)
		assert.NotEmpty(t, errOut.String(), args)
	}
}
