package main

import (
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// infoServer serves body at the local region's info path.
func infoServer(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != localInfoPath {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func envOf(vars map[string]string) Env {
	return Env{Getenv: func(k string) string { return vars[k] }, Now: time.Now}
}

func TestConnectLocal(t *testing.T) {
	info := `{"state_machine_arn":"arn:aws:states:us-east-1:111111111111:stateMachine:ferry-deployer","bucket":"ferry-deployer-111111111111-us-east-1","now":"2030-01-02T03:04:05Z"}`
	url := infoServer(t, http.StatusOK, info)
	cases := []struct {
		name       string
		flags      deployerFlags
		env        map[string]string
		sm, bucket string
	}{
		{"from the region", deployerFlags{local: true}, nil,
			"arn:aws:states:us-east-1:111111111111:stateMachine:ferry-deployer", "ferry-deployer-111111111111-us-east-1"},
		{"the environment names a deployer in AWS: ignored", deployerFlags{local: true}, map[string]string{envStateMachine: "arn:env", envBucket: "env-bucket"},
			"arn:aws:states:us-east-1:111111111111:stateMachine:ferry-deployer", "ferry-deployer-111111111111-us-east-1"},
		{"flags before environment", deployerFlags{local: true, stateMachine: "arn:flag", bucket: "flag-bucket"}, map[string]string{envStateMachine: "arn:env", envBucket: "env-bucket"},
			"arn:flag", "flag-bucket"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]string{envLocalEndpoint: url + "/"}
			for k, v := range tc.env {
				vars[k] = v
			}
			d, err := connect(context.Background(), envOf(vars), &tc.flags)
			require.NoError(t, err)
			assert.Equal(t, tc.sm, d.cfg.StateMachineARN)
			assert.Equal(t, tc.bucket, d.cfg.Bucket)
			assert.Equal(t, url, d.cfg.Endpoint, "trailing slash trimmed")
			assert.Equal(t, localRegion, d.cfg.Region)
			now, err := d.now(context.Background())
			require.NoError(t, err)
			assert.Equal(t, time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), now, "created_at comes from the region's clock")
		})
	}
}

func TestConnectLocalFails(t *testing.T) {
	cases := []struct {
		name, url, want string
	}{
		{"not answering", deadRegion(t), "does not answer"},
		{"error status", infoServer(t, http.StatusInternalServerError, "{}"), "500"},
		{"not JSON", infoServer(t, http.StatusOK, "<html>"), "not a local region description"},
		{"no names", infoServer(t, http.StatusOK, `{"bucket":""}`), "names no state machine or bucket"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := connect(context.Background(), envOf(map[string]string{envLocalEndpoint: tc.url}), &deployerFlags{local: true})
			require.ErrorIs(t, err, errNoDeployer)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestIdentity(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"USER": "alice"}, "alice"},
		{map[string]string{"USER": "alice", envCreatedBy: "ci@build-42"}, "ci@build-42"},
		{map[string]string{"LOGNAME": "bob"}, "bob"},
		{map[string]string{"USER": "a l\x1bice\n"}, "a lice"},
		{map[string]string{"USER": "日本"}, "日本"},
		{nil, "unknown"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, displayName(envOf(tc.env)))
	}
}

// TestHintsPaste: a hint names the deployer as the user did (--local,
// --state-machine, --bucket) and quotes each word for the shell, so pasted
// it parses back into the same command, flags and arguments (issue #17,
// item 7).
func TestHintsPaste(t *testing.T) {
	f := deployerFlags{local: true, stateMachine: "arn:aws:states:us-east-1:111111111111:stateMachine:ferry-deployer", bucket: "my bucket"}
	hint := f.command("halt", "it's here/release.json")
	assert.Equal(t, `ferry halt --local --state-machine arn:aws:states:us-east-1:111111111111:stateMachine:ferry-deployer --bucket 'my bucket' 'it'\''s here/release.json'`, hint)

	words := shellWords(t, hint)
	require.Equal(t, []string{"ferry", "halt"}, words[:2])
	var c haltCommand
	fs := flag.NewFlagSet("halt", flag.ContinueOnError)
	c.defineFlags(fs)
	args, err := parseInterspersed(fs, words[2:])
	require.NoError(t, err)
	assert.Equal(t, f, c.deployer)
	assert.Equal(t, []string{"it's here/release.json"}, args)

	assert.Equal(t, "ferry status coinbase/deploy-test development", (&deployerFlags{}).command("status", "coinbase/deploy-test", "development"))
}

// shellWords splits s as a POSIX shell does words of plain and
// single-quoted text and backslash escapes (what shellQuote writes).
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	inWord, quoted, escaped := false, false, false
	for _, r := range s {
		switch {
		case escaped:
			w.WriteRune(r)
			escaped = false
		case !quoted && r == '\\':
			escaped, inWord = true, true
		case quoted && r == '\'':
			quoted = false
		case quoted:
			w.WriteRune(r)
		case r == '\'':
			quoted, inWord = true, true
		case r == ' ':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	require.False(t, quoted, "unterminated quote in %q", s)
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// Who is asking falls back from the environment to the operating system's
// user at the host name: never "unknown" when anything is known (CI and
// containers often leave USER unset).
func TestDisplayName(t *testing.T) {
	tests := []struct {
		name       string
		vars       map[string]string
		user, host string
		want       string
	}{
		{"FERRY_CREATED_BY first", map[string]string{envCreatedBy: "ci-bot", "USER": "jane"}, "root", "box", "ci-bot"},
		{"then USER", map[string]string{"USER": "jane"}, "root", "box", "jane"},
		{"then LOGNAME", map[string]string{"LOGNAME": "joe"}, "root", "box", "joe"},
		{"then the OS user at the host", nil, "runner", "ci-7", "runner@ci-7"},
		{"the OS user alone", nil, "runner", "", "runner"},
		{"the host alone", nil, "", "ci-7", "someone@ci-7"},
		{"nothing known", nil, "", "", "unknown"},
		{"control characters dropped", map[string]string{"USER": "ja\x1b[2Jne"}, "", "", "ja[2Jne"},
		{"a full name kept whole", map[string]string{envCreatedBy: "Jane Doe"}, "", "", "Jane Doe"},
		{"accents kept", map[string]string{envCreatedBy: "José"}, "", "", "José"},
		{"spaces tidied", map[string]string{envCreatedBy: "  Jane \t Doe "}, "", "", "Jane Doe"},
		{"nothing printable falls back", map[string]string{envCreatedBy: "\x00"}, "runner", "ci-7", "runner@ci-7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := Env{
				Getenv: func(k string) string { return tt.vars[k] },
				Whoami: func() (string, string) { return tt.user, tt.host },
			}
			assert.Equal(t, tt.want, displayName(env))
		})
	}
}
