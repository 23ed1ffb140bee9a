package bootstrap

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRender(t *testing.T) {
	tests := []struct {
		name      string
		accounts  []string
		qualifier string
		want      string // error substring; empty means success
	}{
		{"one account", []string{"111111111111"}, "", ""},
		{"two accounts and a qualifier", []string{"111111111111", "222222222222"}, "blue2", ""},
		{"no account", nil, "", "at least one trusted account"},
		{"short account", []string{"12345"}, "", `"12345" is not a 12-digit`},
		{"account with letters", []string{"11111111111a"}, "", "not a 12-digit"},
		{"upper-case qualifier", []string{"111111111111"}, "Blue", `qualifier "Blue"`},
		{"long qualifier", []string{"111111111111"}, strings.Repeat("a", 11), "at most 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Render(tt.accounts, tt.qualifier)
			if tt.want != "" {
				assert.ErrorContains(t, err, tt.want)
				return
			}
			require.NoError(t, err)
			var tmpl struct {
				Parameters map[string]struct {
					Default *string
					Type    string
				}
			}
			require.NoError(t, json.Unmarshal(out, &tmpl))
			require.NotNil(t, tmpl.Parameters[ParamTrustedAccounts].Default)
			assert.Equal(t, strings.Join(tt.accounts, ","), *tmpl.Parameters[ParamTrustedAccounts].Default)
			assert.Equal(t, "CommaDelimitedList", tmpl.Parameters[ParamTrustedAccounts].Type)
			require.NotNil(t, tmpl.Parameters[ParamQualifier].Default)
			assert.Equal(t, tt.qualifier, *tmpl.Parameters[ParamQualifier].Default)
			assert.Less(t, len(out), MaxTemplateBytes)
		})
	}
	assert.NotContains(t, string(Template()), "111111111111", "Render does not change the committed template")
}

func TestTemplateIsFormatted(t *testing.T) {
	out, err := Format(Template())
	require.NoError(t, err)
	assert.Equal(t, string(Template()), string(out))
	_, err = Format([]byte(`{} {}`))
	assert.ErrorContains(t, err, "after the JSON object")
	_, err = Format([]byte(`nope`))
	assert.Error(t, err)
}
