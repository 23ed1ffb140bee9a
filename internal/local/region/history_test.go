package region

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/execution"
)

// The history view serves an execution's whole history as
// GetExecutionHistory does, each payload with its packed parts unpacked:
// a health check's state document shows each service's health in plain
// JSON, and reads as the same State the recorded one does. The history
// itself keeps what the deployer recorded. An execution not in the region
// is 404, a request naming none 400.
func TestHistoryViewUnpacks(t *testing.T) {
	ctx := context.Background()
	reg, clk := newTestRegion(t, Options{})
	x, err := reg.StartRelease(ctx, releaseJSON(t, clk, "r1"))
	require.NoError(t, err)
	require.NoError(t, x.Wait(ctx))
	require.Equal(t, execution.EndSuccess, last(x.Path()))

	view := httptest.NewServer(reg.Handler())
	defer view.Close()
	var got struct {
		Events []struct {
			ID     int64 `json:"id"`
			Exited *struct {
				Name   string `json:"name"`
				Output string `json:"output"`
			} `json:"stateExitedEventDetails"`
		} `json:"events"`
	}
	getJSON(t, view.URL+HistoryPath+"?"+url.Values{"execution": {x.ARN()}}.Encode(), &got)
	recorded := x.History()
	require.Len(t, got.Events, len(recorded))

	checks := 0
	for i, ev := range got.Events {
		require.Equal(t, recorded[i].ID, ev.ID)
		if ev.Exited == nil || ev.Exited.Name != execution.TaskCheckHealthy {
			continue
		}
		checks++
		require.NotNil(t, recorded[i].StateExited)
		raw := recorded[i].StateExited.Output
		require.Contains(t, raw, `"services_z":`, "the deployer records it packed")
		assert.NotContains(t, ev.Exited.Output, `_z"`, "nothing packed is shown")
		assert.Contains(t, ev.Exited.Output, `"services":{"web":{`, "each service's health, plain")
		var shown, kept execution.State
		require.NoError(t, json.Unmarshal([]byte(ev.Exited.Output), &shown))
		require.NoError(t, json.Unmarshal([]byte(raw), &kept))
		assert.Equal(t, kept, shown)
	}
	assert.Positive(t, checks, "the deploy checked its health")

	for query, status := range map[string]int{
		"execution=" + url.QueryEscape(strings.Replace(x.ARN(), x.Describe().Name, "nope", 1)): http.StatusNotFound,
		"": http.StatusBadRequest,
	} {
		resp, err := http.Get(view.URL + HistoryPath + "?" + query)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, status, resp.StatusCode, query)
	}
}
