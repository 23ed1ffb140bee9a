package execution

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deployOf is the state of a deploy of n services retiring their
// previous groups, as a health check and a retirement step leave it.
func deployOf(n int) State {
	since := time.Date(2025, 3, 4, 10, 4, 37, 2e6, time.UTC)
	st := State{ProjectName: "bench", ConfigName: "grid", ReleaseID: "20250304T100500Z-a1b2c3", Timeout: 3600,
		Images: map[string]string{}, Health: &Health{Healthy: true, WaitSeconds: 11, Checks: 16, Services: map[string]ServiceHealth{}},
		Retire: &Retire{WaitSeconds: 15, Restoring: []RestoringGroup{{Name: "ferry/bench/grid/svc00/r0", Healthy: 1, Want: 2}}}}
	for i := range n {
		svc := fmt.Sprintf("svc%02d", i)
		st.Services = append(st.Services, svc)
		group := fmt.Sprintf("ferry/bench/grid/%s/20250304T100000Z-d9877e", svc)
		st.Previous = append(st.Previous, group)
		st.Images[svc] = fmt.Sprintf("ami-%017x", 0xbe0001+i%3)
		at := since.Add(time.Duration(i) * 1100 * time.Millisecond)
		st.Health.Services[svc] = ServiceHealth{Launched: 2, Healthy: 2, InService: 2, Target: 1, Desired: 1, Launch: 2,
			StableSeconds: 60, HealthySince: &at, Instances: fmt.Sprintf("%016x", uint64(i+1)*0x9e3779b97f4a7c15), Confirmed: true, ReadySeconds: 60 + i%30}
		st.Retire.Groups = append(st.Retire.Groups, RetiringGroup{Name: group, Phase: PhaseScalingIn, Instances: 1, HooksPending: 1})
	}
	return st
}

// A state's parts that grow with its services are written packed, and
// read back as they were; the fields the state machine's Choice states
// read stay plain.
func TestPackedRoundTrip(t *testing.T) {
	tests := []struct {
		name        string
		v, back     any
		packed      []string
		plain       []string
		notPlain    []string
		choiceReads map[string]any
	}{
		{name: "health", v: *deployOf(3).Health, back: &Health{}, packed: []string{"services_z"}, notPlain: []string{"services"},
			choiceReads: map[string]any{"healthy": true, "wait_seconds": 11.0, "next_step": false}},
		{name: "retire", v: *deployOf(3).Retire, back: &Retire{}, packed: []string{"groups_z"}, notPlain: []string{"groups", "restoring"},
			choiceReads: map[string]any{"done": false, "wait_seconds": 15.0}},
		{name: "state", v: deployOf(3), back: &State{}, packed: []string{"previous_z"}, notPlain: []string{"previous", "images"},
			plain: []string{"services", "health", "retire"}},
		{name: "empty health", v: Health{WaitSeconds: 5}, back: &Health{}, notPlain: []string{"services", "services_z"}},
		{name: "empty state", v: State{ReleaseID: "r"}, back: &State{}, notPlain: []string{"previous", "images", "previous_z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(tt.v)
			require.NoError(t, err)
			var doc map[string]any
			require.NoError(t, json.Unmarshal(raw, &doc))
			for _, k := range tt.packed {
				assert.IsType(t, "", doc[k], k)
			}
			for _, k := range tt.plain {
				assert.Contains(t, doc, k)
			}
			for _, k := range tt.notPlain {
				assert.NotContains(t, doc, k)
			}
			for k, want := range tt.choiceReads {
				assert.Equal(t, want, doc[k], k)
			}
			require.NoError(t, json.Unmarshal(raw, tt.back))
			assert.Equal(t, tt.v, deref(tt.back))
		})
	}
}

func deref(v any) any {
	switch p := v.(type) {
	case *Health:
		return *p
	case *Retire:
		return *p
	case *State:
		return *p
	}
	return v
}

// plainJSON is st as it was written before its parts were packed.
func plainJSON(t *testing.T, st State) []byte {
	t.Helper()
	type plainHealth Health
	type plainRetire Retire
	type plainState State
	raw, err := json.Marshal(struct {
		plainState
		Health *plainHealth `json:"health"`
		Retire *plainRetire `json:"retire"`
	}{plainState(st), (*plainHealth)(st.Health), (*plainRetire)(st.Retire)})
	require.NoError(t, err)
	return raw
}

// A state written before its parts were packed (an execution's history
// recorded then) reads as it did.
func TestPackedReadsPlain(t *testing.T) {
	st := deployOf(2)
	raw := plainJSON(t, st)
	require.Contains(t, string(raw), `"previous":[`)
	require.Contains(t, string(raw), `"services":{"svc00"`)
	var back State
	require.NoError(t, json.Unmarshal(raw, &back))
	assert.Equal(t, st, back)
}

// Packed, the state of a deploy of 50 services is a fifth of its plain
// size: each state's events in the execution history carry it, and a
// follower reads it at each of its polls.
func TestPackedSize(t *testing.T) {
	st := deployOf(50)
	raw, err := json.Marshal(st)
	require.NoError(t, err)
	plain := plainJSON(t, st)
	t.Logf("a deploy of 50 services: %d bytes packed, %d plain", len(raw), len(plain))
	assert.Less(t, len(raw), 5<<10)
	assert.Less(t, 5*len(raw), len(plain))
}

// bomb is a packed part of n bytes of JSON whitespace and an empty map.
func bomb(n int) string {
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	_, _ = zw.Write(bytes.Repeat([]byte(" "), n))
	_, _ = zw.Write([]byte("{}"))
	_ = zw.Close()
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// A packed part that does not read fails the whole document, naming the
// part: nothing is taken from it half-read.
func TestPackedRefusesCorrupt(t *testing.T) {
	good, err := json.Marshal(*deployOf(1).Health)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(good, &doc))
	z := doc["services_z"].(string)
	tests := []struct {
		name, packed, want string
	}{
		{"not base64", "%%%", "health.services_z: not base64"},
		{"not zlib", "aGVsbG8=", "health.services_z: not zlib"},
		{"truncated", z[:len(z)-8], "health.services_z"},
		{"too large", bomb(maxUnpacked + 1), "health.services_z: inflates to more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(map[string]any{"healthy": false, "services_z": tt.packed})
			require.NoError(t, err)
			var h Health
			err = json.Unmarshal(raw, &h)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Nil(t, h.Services)
		})
	}
}

// Unpacked shows a document as it would be written plain: every packed
// part, wherever it is (a task's parameters hold the state under input),
// in its plain form, and nothing packed left; a plain document, text that
// is not JSON and a document without packed parts are shown as they are;
// a packed part that does not read is an error naming it.
func TestUnpacked(t *testing.T) {
	st := deployOf(3)
	packed, err := json.Marshal(st)
	require.NoError(t, err)
	plain := string(plainJSON(t, st))
	tests := []struct {
		name, doc, want, err string
	}{
		{name: "state", doc: string(packed), want: plain},
		{name: "parameters", doc: `{"task":"CheckHealthy","input":` + string(packed) + `}`, want: `{"task":"CheckHealthy","input":` + plain + `}`},
		{name: "in a list", doc: `[` + string(packed) + `,1.50]`, want: `[` + plain + `,1.50]`},
		{name: "plain", doc: plain, want: plain},
		{name: "no packed part", doc: `{"a":1e3,"b":[null,true,"x"]}`, want: `{"a":1e3,"b":[null,true,"x"]}`},
		{name: "not JSON", doc: `LockExistsError: held`, want: `LockExistsError: held`},
		{name: "two documents", doc: `{} {}`, want: `{} {}`},
		{name: "corrupt", doc: `{"health":{"services_z":"%%%"}}`, want: `{"health":{"services_z":"%%%"}}`, err: "services_z: not base64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Unpacked(tt.doc)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				assert.Equal(t, tt.want, got)
				return
			}
			require.NoError(t, err)
			if json.Valid([]byte(tt.want)) {
				assert.JSONEq(t, tt.want, got)
			} else {
				assert.Equal(t, tt.want, got)
			}
			assert.NotContains(t, got, packedSuffix+`"`, "nothing packed is left")
		})
	}
}
