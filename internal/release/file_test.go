package release

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An asset file must be a non-empty regular file that resolves, symlinks
// followed, inside the release file's directory.
func TestReadFileAssetFiles(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(outside, []byte("token"), 0o600))
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string // "" means accepted
	}{
		{"regular file", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "conf"), []byte("x"), 0o644))
		}, ""},
		{"link inside the directory", func(t *testing.T, dir string) {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "real"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "real", "conf"), []byte("x"), 0o644))
			require.NoError(t, os.Symlink(filepath.Join(dir, "real", "conf"), filepath.Join(dir, "conf")))
		}, ""},
		{"link out of the directory", func(t *testing.T, dir string) {
			require.NoError(t, os.Symlink(outside, filepath.Join(dir, "conf")))
		}, "assets.conf.path: cannot use conf (relative to the release file): resolves (through a symbolic link) outside the release file's directory"},
		{"missing", func(t *testing.T, dir string) {}, "assets.conf.path: cannot use conf (relative to the release file): no such file or directory"},
		{"empty", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "conf"), nil, 0o644))
		}, "assets.conf.path: cannot use conf (relative to the release file): empty file"},
		{"directory", func(t *testing.T, dir string) {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "conf"), 0o755))
		}, "assets.conf.path: cannot use conf (relative to the release file): not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(t, dir)
			file := filepath.Join(dir, "release.json")
			require.NoError(t, os.WriteFile(file, []byte(`{"project_name":"acme/shop","config_name":"dev","subnets":["s"],"ami":"a",
				"assets":{"conf":{"path":"conf"}},"services":{"web":{"instance_type":"t3.micro"}}}`), 0o644))
			_, err := ReadFile(file)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.Contains(t, problemsOf(t, err), tt.want)
		})
	}
}
