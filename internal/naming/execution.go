package naming

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// MaxExecutionNameLen is Step Functions' limit on an execution name.
const MaxExecutionNameLen = 80

// ExecutionName is the name of the execution that deploys release
// releaseID of project/config. Step Functions makes a name unique per state
// machine (StartExecution is idempotent for the same name and input), so
// the same release always gets the same name and a retried start never
// deploys twice, and distinct releases must never share one.
//
// The name keeps to the characters Step Functions allows when logging is
// on ([A-Za-z0-9_-]) and is injective for valid names (project
// "org/name": lowercase letters, digits, '.', '_', '-'; config: lowercase
// letters, digits, '-'; release id: letters, digits, '-'): the project's
// '.' and '_' become 'D' and 'U' (never in a project otherwise) and its
// '/' becomes '_', and the parts are joined with '_', so a name of up to
// 80 characters has exactly three '_' and reads back to one release:
//
//	coinbase/deploy-test, development, r1 -> coinbase_deploy-test_development_r1
//
// A longer name is cut to 62 characters and ends with "__" and 16 hex
// digits of the SHA-256 of the release's coordinates: "__" never occurs in
// an uncut name, so cut and uncut names never meet, and cut names differ
// unless SHA-256 collides in 64 bits.
func ExecutionName(project, config, releaseID string) string {
	enc := strings.NewReplacer(".", "D", "_", "U", "/", "_").Replace(project)
	name := enc + "_" + config + "_" + releaseID
	if len(name) <= MaxExecutionNameLen {
		return name
	}
	sum := sha256.Sum256([]byte(project + "\x00" + config + "\x00" + releaseID))
	suffix := "__" + hex.EncodeToString(sum[:8])
	return name[:MaxExecutionNameLen-len(suffix)] + suffix
}

// ParseExecutionName reads an execution name back into the release it
// deploys: the inverse of ExecutionName for the names it did not cut. ok
// is false for a cut name (it ends in a hash; read the execution's input
// instead) and for a name ExecutionName never makes.
func ParseExecutionName(name string) (project, config, releaseID string, ok bool) {
	parts := strings.Split(name, "_")
	if len(parts) != 4 || slices.Contains(parts, "") {
		return "", "", "", false
	}
	dec := strings.NewReplacer("D", ".", "U", "_")
	return dec.Replace(parts[0]) + "/" + dec.Replace(parts[1]), parts[2], parts[3], true
}
