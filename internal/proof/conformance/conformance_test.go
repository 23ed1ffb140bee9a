package conformance

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/proof/reliability"
)

// TestConformance runs every scenario on one moto_server (moto 5.2.1), as
// make conformance does. Each scenario cites the AWS behaviour it relies
// on where it is defined (scenarios.go).
func TestConformance(t *testing.T) {
	root, err := reliability.FindRoot(".")
	require.NoError(t, err)
	results, err := Run(context.Background(), Options{Root: root})
	if errors.Is(err, ErrNoMoto) {
		t.Skip(err.Error())
	}
	require.NoError(t, err)
	require.Len(t, results, len(Scenarios()))
	for _, r := range results {
		t.Run(r.Scenario, func(t *testing.T) {
			require.NoError(t, r.Err, r.What)
		})
	}
}
