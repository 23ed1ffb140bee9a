package release

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/limits"
)

// UserDataFile returns the path of the user data file of the release file
// at releasePath: releasePath + ".userdata".
func UserDataFile(releasePath string) string { return releasePath + ".userdata" }

// AssetPath returns where the file of asset a of the release file at
// releasePath is: a.Path is relative to the release file's directory.
func AssetPath(releasePath string, a *Asset) string {
	return filepath.Join(filepath.Dir(releasePath), filepath.FromSlash(a.Path))
}

// ReadFile reads the release file at path the way every ferry command
// does: it decodes it strictly (DecodeFile), replaces a user_data of
// UserDataFileMarker with the contents of UserDataFile(path), checks that
// every asset's file is a readable regular file of at most
// limits.MaxAssetBytes, applies defaults and validates it as a release
// file (Validate(false)).
//
// It returns the release and nil, or nil and an error: a
// *failure.BadReleaseError listing every problem (including an unreadable
// user data or asset file), or another error when the release file itself
// cannot be read. Error messages name files as given, never their contents.
func ReadFile(path string) (*Release, error) { return readFile(path, true) }

// ReadTemplate reads a release file that is not deployed as it is but is
// made into releases (a pipeline promotes it into each of its stages):
// as ReadFile, but it neither applies defaults nor validates the release,
// whose config, target and environment facts each release made from it
// sets; each of those is validated instead.
func ReadTemplate(path string) (*Release, error) { return readFile(path, false) }

func readFile(path string, validate bool) (*Release, error) {
	data, err := readBounded(path, limits.MaxReleaseBytes)
	if err != nil {
		return nil, err
	}
	r, err := DecodeFile(data)
	if err != nil {
		return nil, err
	}
	p := &problems{}
	if r.UsesUserDataFile() {
		udPath := UserDataFile(path)
		ud, why := readUserDataFile(filepath.Dir(path), udPath)
		if why != "" {
			p.add("user_data", "%s needs %s next to the release file: %s", UserDataFileMarker, filepath.Base(udPath), why)
		} else {
			r.ReplaceUserDataFile(ud)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Assets)) {
		a := r.Assets[name]
		if a == nil || checkAssetPath(a.Path) != "" {
			continue // Validate reports it
		}
		if why := checkAssetFile(filepath.Dir(path), AssetPath(path, a)); why != "" {
			p.add(field(field("assets", name), "path"), "cannot use %s (relative to the release file): %s", a.Path, why)
		}
	}
	if !validate {
		if err := p.err(); err != nil {
			return nil, err
		}
		return r, nil
	}
	r.ApplyDefaults()
	if err := r.Validate(false); err != nil {
		var bad *failure.BadReleaseError
		if errors.As(err, &bad) {
			p.list = append(p.list, bad.Problems...)
		} else {
			return nil, err
		}
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return r, nil
}

// readBounded reads at most max bytes of the file at path; a larger file is
// an error.
func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, plainPathError(path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, plainPathError(path, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, max)
	}
	return data, nil
}

// checkAssetFile returns why the asset file at path cannot be published,
// or "" (see checkContained).
func checkAssetFile(dir, path string) string {
	if why := checkContained(dir, path, limits.MaxAssetBytes); why != "" {
		return why
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() == 0 {
		return "empty file"
	}
	return ""
}

// readUserDataFile reads the user data file at path, or says why it
// cannot: besides checkContained's rules, user data must be UTF-8 text,
// because a release carries it as a JSON string (binary user data, such
// as gzip'd cloud-init, would be changed on the way, never silently).
func readUserDataFile(dir, path string) (string, string) {
	if why := checkContained(dir, path, limits.MaxUserDataBytes); why != "" {
		return "", why
	}
	data, err := readBounded(path, limits.MaxUserDataBytes)
	if err != nil { // it changed since it was checked
		return "", err.Error()
	}
	if at := firstInvalidUTF8(data); at >= 0 {
		return "", fmt.Sprintf("is not UTF-8 text: the byte at offset %d (%#02x) is invalid; "+
			"binary user data, such as gzip'd cloud-init, is not supported yet", at, data[at])
	}
	return string(data), ""
}

// firstInvalidUTF8 returns the offset of the first byte of data that does
// not begin a valid UTF-8 encoding, or -1 when data is valid UTF-8.
func firstInvalidUTF8(data []byte) int {
	for at := 0; at < len(data); {
		r, size := utf8.DecodeRune(data[at:])
		if r == utf8.RuneError && size <= 1 {
			return at
		}
		at += size
	}
	return -1
}

// checkContained returns why the file at path cannot be read as part of
// the release, or "". It must resolve, symlinks followed, to a place
// inside dir (the release file's directory): a link out of it could ship
// a file nobody meant to (a CI credential in a pull request, say). It must
// be a readable regular file of at most max bytes.
func checkContained(dir, path string, max int64) string {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return errors.Unwrap(plainPathError(path, err)).Error()
	case !within(dir, path):
		return "resolves (through a symbolic link) outside the release file's directory"
	case fi.IsDir():
		return "is a directory, not a regular file"
	case !fi.Mode().IsRegular():
		return "not a regular file"
	case fi.Size() > max:
		return fmt.Sprintf("is %d bytes, at most %d", fi.Size(), max)
	}
	f, err := os.Open(path)
	if err != nil {
		return errors.Unwrap(plainPathError(path, err)).Error()
	}
	f.Close()
	return ""
}

// within reports whether path, symlinks resolved, lies inside dir, symlinks
// resolved.
func within(dir, path string) bool {
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	realPath, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(realDir, realPath)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// plainPathError turns "open x: no such file or directory" into
// "cannot read x: no such file or directory".
func plainPathError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("cannot read %s: %w", path, err)
}
