package codestats

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestREADMECodeMapNamesEveryPackage: the README's code map names every
// package of the module, and nothing that is not one, so it stays true as
// packages come and go.
func TestREADMECodeMapNamesEveryPackage(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	goList := func(args ...string) string {
		cmd := exec.Command("go", append([]string{"list"}, args...)...)
		cmd.Dir = root
		out, err := cmd.Output()
		require.NoError(t, err, "go list %v", args)
		return string(out)
	}
	prefix := strings.TrimSpace(goList("-m")) + "/"
	out := goList("-f", "{{.ImportPath}}", "./...")
	var packages []string
	for _, p := range strings.Fields(out) {
		packages = append(packages, strings.TrimPrefix(p, prefix))
	}

	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	text := string(readme)
	start := strings.Index(text, "<!-- code map -->")
	require.NotEqual(t, -1, start, "the README has a code map")
	table := text[start:]
	table = table[:strings.Index(table, "\n\n")]
	var named []string
	row := regexp.MustCompile("(?m)^\\| (.+?) \\|")
	cell := regexp.MustCompile("`([^`]+)`")
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		for _, c := range cell.FindAllStringSubmatch(m[1], -1) {
			named = append(named, c[1])
		}
	}
	slices.Sort(packages)
	slices.Sort(named)
	assert.Equal(t, packages, named)
}
