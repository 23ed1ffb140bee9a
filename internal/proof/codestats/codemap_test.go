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

// modulePackages are the module's packages, relative to its root.
func modulePackages(t *testing.T, root string) []string {
	t.Helper()
	goList := func(args ...string) string {
		cmd := exec.Command("go", append([]string{"list"}, args...)...)
		cmd.Dir = root
		out, err := cmd.Output()
		require.NoError(t, err, "go list %v", args)
		return string(out)
	}
	prefix := strings.TrimSpace(goList("-m")) + "/"
	var packages []string
	for _, p := range strings.Fields(goList("-f", "{{.ImportPath}}", "./...")) {
		packages = append(packages, strings.TrimPrefix(p, prefix))
	}
	slices.Sort(packages)
	return packages
}

// codeMap returns what the code map table after the <!-- code map -->
// marker of the markdown file at path names: the `quoted` cells of each
// row's first column.
func codeMap(t *testing.T, path string) []string {
	t.Helper()
	text, err := os.ReadFile(path)
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(text), "<!-- code map -->")
	require.True(t, ok, "%s has a code map", path)
	table, _, _ = strings.Cut(table, "\n\n")
	var named []string
	row := regexp.MustCompile("(?m)^\\| (.+?) \\|")
	cell := regexp.MustCompile("`([^`]+)`")
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		for _, c := range cell.FindAllStringSubmatch(m[1], -1) {
			named = append(named, c[1])
		}
	}
	return named
}

// covers reports which of packages a code map's name stands for: the
// package itself, or for "dir/*" every package under dir.
func covers(name string, packages []string) []string {
	dir, folder := strings.CutSuffix(name, "/*")
	var out []string
	for _, p := range packages {
		if (folder && strings.HasPrefix(p, dir+"/")) || (!folder && p == name) {
			out = append(out, p)
		}
	}
	return out
}

// TestREADMECodeMapCoversEveryPackage: the README's short code map covers
// every package of the module exactly once, by its name or by a row
// naming its folder ("internal/local/*"), and names nothing that is not a
// package or a folder of packages, so it stays true as packages come and
// go.
func TestREADMECodeMapCoversEveryPackage(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	packages := modulePackages(t, root)
	var covered []string
	for _, name := range codeMap(t, filepath.Join(root, "README.md")) {
		c := covers(name, packages)
		assert.NotEmpty(t, c, "the README's code map names %s, which is no package nor folder of packages", name)
		covered = append(covered, c...)
	}
	slices.Sort(covered)
	assert.Equal(t, packages, covered, "every package covered once")
}

// TestHelpCodeMapNamesEveryPackage: the development help page's full code
// map names every package of the module, each by its own name, and
// nothing that is not one.
func TestHelpCodeMapNamesEveryPackage(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	named := codeMap(t, filepath.Join(root, "client", "help", "development.md"))
	slices.Sort(named)
	assert.Equal(t, modulePackages(t, root), named)
}

func TestCovers(t *testing.T) {
	packages := []string{"client", "client/help", "internal/local/asl", "internal/local/s3server/s3test", "internal/localx"}
	tests := []struct {
		name string
		want []string
	}{
		{"client", []string{"client"}},
		{"client/*", []string{"client/help"}},
		{"internal/local/*", []string{"internal/local/asl", "internal/local/s3server/s3test"}},
		{"internal/local", nil},
		{"internal/nothing/*", nil},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, covers(tt.name, packages), tt.name)
	}
}
