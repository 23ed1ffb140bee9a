package asl

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

var placeholderRE = regexp.MustCompile(`\$\{([A-Za-z0-9_.:-]+)\}`)

// Substitute replaces every "${Name}" placeholder in a definition with
// values[Name], as Step Functions' DefinitionSubstitutions do (the
// generated definition names the deployer Lambda's ARN this way). Values
// are JSON-escaped, so they are meant for placeholders inside JSON
// strings. A placeholder without a value is an error naming it.
func Substitute(definition []byte, values map[string]string) ([]byte, error) {
	var missing []string
	out := placeholderRE.ReplaceAllFunc(definition, func(m []byte) []byte {
		name := string(m[2 : len(m)-1])
		v, ok := values[name]
		if !ok {
			missing = append(missing, name)
			return m
		}
		enc, _ := json.Marshal(v)
		return enc[1 : len(enc)-1]
	})
	if len(missing) > 0 {
		return nil, fmt.Errorf("asl: definition placeholders without a value: ${%s}", strings.Join(missing, "}, ${"))
	}
	return out, nil
}
