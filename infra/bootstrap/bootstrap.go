package bootstrap

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/ferryhq/ferry/internal/limits"
)

// Parameters of the template (the names infra/stacks gives them).
const (
	ParamTrustedAccounts = "TrustedAccounts"
	ParamQualifier       = "Qualifier"
)

// MaxTemplateBytes is the largest template CloudFormation accepts as a
// TemplateBody (and so StackSets without an S3 bucket).
const MaxTemplateBytes = 51200

//go:embed template.json
var raw []byte

// Template returns the committed bootstrap template, without parameter
// defaults for the trusted accounts. The caller owns the returned slice.
func Template() []byte { return bytes.Clone(raw) }

var (
	accountRE   = regexp.MustCompile(`^[0-9]{12}$`)
	qualifierRE = regexp.MustCompile(`^[a-z0-9]*$`)
)

// Render returns the bootstrap template with the trusted accounts and the
// qualifier set as the defaults of its parameters, so the template deploys
// as is (aws cloudformation deploy, a StackSet). It fails, naming the bad
// value, when an account is not 12 digits, no account is given, or the
// qualifier is not at most limits.MaxQualifierLen lowercase letters and
// digits.
func Render(trustedAccounts []string, qualifier string) ([]byte, error) {
	if len(trustedAccounts) == 0 {
		return nil, fmt.Errorf("bootstrap template: at least one trusted account is required")
	}
	for _, a := range trustedAccounts {
		if !accountRE.MatchString(a) {
			return nil, fmt.Errorf("bootstrap template: trusted account %q is not a 12-digit AWS account id", a)
		}
	}
	if len(qualifier) > limits.MaxQualifierLen || !qualifierRE.MatchString(qualifier) {
		return nil, fmt.Errorf("bootstrap template: qualifier %q must be at most %d lowercase letters and digits",
			qualifier, limits.MaxQualifierLen)
	}
	tmpl, err := decode(raw)
	if err != nil {
		return nil, err
	}
	params, _ := tmpl["Parameters"].(map[string]interface{})
	for name, value := range map[string]string{
		ParamTrustedAccounts: strings.Join(trustedAccounts, ","),
		ParamQualifier:       qualifier,
	} {
		p, ok := params[name].(map[string]interface{})
		if !ok {
			return nil, fmt.Errorf("bootstrap template: parameter %s is missing", name)
		}
		p["Default"] = value
	}
	return encode(tmpl)
}

// Format returns a template in the committed form: keys sorted, two-space
// indentation, no HTML escaping, a trailing newline.
func Format(template []byte) ([]byte, error) {
	tmpl, err := decode(template)
	if err != nil {
		return nil, err
	}
	return encode(tmpl)
}

func decode(b []byte) (map[string]interface{}, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v map[string]interface{}
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("bootstrap template: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("bootstrap template: data after the JSON object")
	}
	return v, nil
}

func encode(v map[string]interface{}) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("bootstrap template: %w", err)
	}
	return b.Bytes(), nil
}
