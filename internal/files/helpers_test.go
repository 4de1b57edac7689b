package files

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree creates files (path -> content) under a new directory and opens
// it as a Tree. Paths ending in "/" create empty directories.
func writeTree(t testing.TB, files map[string]string) (string, *Tree) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return dir, tr
}

// symlink creates a symbolic link at dir/name pointing to target (verbatim).
func symlink(t testing.TB, dir, name, target string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, full); err != nil {
		t.Fatal(err)
	}
}

// wantError checks that err is an *Error with the code and that its text
// contains every fragment.
func wantError(t *testing.T, err error, code string, fragments ...string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want *Error %s", err, err, code)
	}
	if e.Code != code {
		t.Errorf("code = %q, want %q (error %q)", e.Code, code, e.Error())
	}
	for _, f := range fragments {
		if !strings.Contains(e.Error(), f) {
			t.Errorf("error %q does not contain %q", e.Error(), f)
		}
	}
}
