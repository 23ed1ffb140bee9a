package deployer

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
)

// FuzzInvoke feeds arbitrary inputs to every task: the answer is a result
// or a named error, never a panic (which Invoke would turn into an
// InternalError saying "panicked").
func FuzzInvoke(f *testing.F) {
	h := newHarness(f)
	f.Add(uint8(0), []byte(`{"project_name":"a/b","config_name":"c","release_id":"r","created_at":"2026-03-01T11:59:00Z","subnets":["s"],"ami":"ubuntu","services":{"web":{"instance_type":"t2.nano"}}}`))
	f.Add(uint8(4), []byte(`{"project_name":"coinbase/deploy-test","config_name":"development","release_id":"r1","release_sha256":"00","target":{"account_id":"111111111111","region":"us-east-1"},"services":["web"]}`))
	f.Add(uint8(5), []byte(`{"health":{"services":{"web":{"target":-1}}}}`))
	f.Add(uint8(8), []byte(`null`))
	f.Add(uint8(2), []byte(`{"project_name":"../..","config_name":"/","release_id":"\u0000","release_sha256":"x","target":{"account_id":"x"}}`))
	tasks := execution.Tasks()
	f.Fuzz(func(t *testing.T, task uint8, input []byte) {
		if !json.Valid(input) {
			input, _ = json.Marshal(string(input))
		}
		req := execution.Request{
			Task: tasks[int(task)%len(tasks)], Input: input,
			Execution: execution.Context{ID: "fuzz", StartTime: epoch},
		}
		_, err := h.d.Invoke(t.Context(), req)
		if err == nil {
			return
		}
		if failure.NameOf(err) == failure.NameInternal && strings.Contains(err.Error(), "panicked") {
			t.Fatalf("task %s panicked on %q: %v", req.Task, input, err)
		}
		var n failure.Named
		if !errors.As(err, &n) {
			t.Fatalf("task %s: error %v is not named", req.Task, err)
		}
	})
}
