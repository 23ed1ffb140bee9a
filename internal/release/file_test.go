package release

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/limits"
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
		}, "assets.conf.path: cannot use conf (relative to the release file): is a directory, not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(t, dir)
			file := filepath.Join(dir, "release.json")
			require.NoError(t, os.WriteFile(file, []byte(`{"project_name":"acme/shop","config_name":"dev","subnets":["s"],"ami":"a",
				"assets":{"conf":{"path":"conf"}},"services":{"web":{"instance_type":"t3.micro","security_groups":["sg-web"]}}}`), 0o644))
			_, err := ReadFile(file)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.Contains(t, problemsOf(t, err), tt.want)
		})
	}
}

// The user data file follows the asset files' rules (inside the release
// file's directory, symlinks followed; a regular file; bounded) and must
// be UTF-8 text: a release carries user data as a JSON string, so binary
// user data would be changed on the way. Every refusal says why, never
// "<nil>".
func TestReadFileUserDataFile(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(outside, []byte("#!/bin/sh\necho token\n"), 0o600))
	const prefix = "user_data: " + UserDataFileMarker + " needs release.json.userdata next to the release file: "
	tests := []struct {
		name  string
		setup func(t *testing.T, ud string)
		want  string // "" means accepted
	}{
		{"text", func(t *testing.T, ud string) {
			require.NoError(t, os.WriteFile(ud, []byte("#!/bin/sh\necho héllo\n"), 0o644))
		}, ""},
		{"link out of the directory", func(t *testing.T, ud string) {
			require.NoError(t, os.Symlink(outside, ud))
		}, prefix + "resolves (through a symbolic link) outside the release file's directory"},
		{"missing", func(t *testing.T, ud string) {}, prefix + "no such file or directory"},
		{"directory", func(t *testing.T, ud string) {
			require.NoError(t, os.MkdirAll(ud, 0o755))
		}, prefix + "is a directory, not a regular file"},
		{"too large", func(t *testing.T, ud string) {
			require.NoError(t, os.WriteFile(ud, bytes.Repeat([]byte("x"), limits.MaxUserDataBytes+1), 0o644))
		}, prefix + fmt.Sprintf("is %d bytes, at most %d", limits.MaxUserDataBytes+1, limits.MaxUserDataBytes)},
		{"binary (gzip)", func(t *testing.T, ud string) {
			require.NoError(t, os.WriteFile(ud, []byte{0x1f, 0x8b, 0x08, 0x00, 0xff, 0xfe}, 0o644))
		}, prefix + "is not UTF-8 text: the byte at offset 1 (0x8b) is invalid; binary user data, such as gzip'd cloud-init, is not supported yet"},
		{"text, then one bad byte", func(t *testing.T, ud string) {
			require.NoError(t, os.WriteFile(ud, []byte("#!/bin/sh\necho h\xe9llo\n"), 0o644))
		}, prefix + "is not UTF-8 text: the byte at offset 16 (0xe9) is invalid; binary user data, such as gzip'd cloud-init, is not supported yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "release.json")
			tt.setup(t, UserDataFile(file))
			require.NoError(t, os.WriteFile(file, []byte(`{"project_name":"acme/shop","config_name":"dev","subnets":["s"],"ami":"a",
				"user_data":"`+UserDataFileMarker+`","services":{"web":{"instance_type":"t3.micro","security_groups":["sg-web"]}}}`), 0o644))
			r, err := ReadFile(file)
			if tt.want == "" {
				require.NoError(t, err)
				assert.Equal(t, "#!/bin/sh\necho héllo\n", r.UserData)
				return
			}
			assert.Contains(t, problemsOf(t, err), tt.want)
			assert.NotContains(t, strings.Join(problemsOf(t, err), "\n"), "<nil>")
		})
	}
}
