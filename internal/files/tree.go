package files

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// Limits on user-supplied paths. They mirror common file-system limits
// (PATH_MAX, NAME_MAX) so that a path we accept can actually exist.
const (
	MaxPathBytes      = 4096
	MaxComponentBytes = 255
)

// maxSymlinks bounds how many symbolic links one lookup follows; 8 is the
// POSIX minimum for SYMLOOP_MAX and the limit os.Root itself uses.
const maxSymlinks = 8

// Tree is a read-only view of one directory tree (a repository snapshot).
// All methods are safe for concurrent use.
type Tree struct {
	root *os.Root
	name string // base name of the directory, the default root name in DirTree
}

// Open opens dir as a Tree. Every later access is confined to dir by os.Root.
func Open(dir string) (*Tree, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("files: open tree: %w", err)
	}
	return &Tree{root: r, name: filepath.Base(filepath.Clean(dir))}, nil
}

// Close releases the directory handle.
func (t *Tree) Close() error { return t.root.Close() }

// CleanPath validates a user path (relative, slash-separated) and returns its
// clean form: no ".", no empty or trailing components, "" for the repository
// root. The root ("", ".", "/", "a/..") is accepted only when allowRoot is
// true. It refuses NUL bytes, backslashes (never treated as separators, so
// `..\x` cannot sneak past), absolute paths, paths that leave the repository
// once cleaned, paths over MaxPathBytes or with a component over
// MaxComponentBytes, and any component equal to ".git" in any letter case
// (case-insensitive file systems would otherwise serve .GIT/config).
// The error is an *Error with Code CodeInvalidPath.
func CleanPath(p string, allowRoot bool) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", newError(CodeInvalidPath, relativeHint, nil, "path %s contains a NUL byte", quote(p))
	}
	if len(p) > MaxPathBytes {
		return "", newError(CodeInvalidPath, relativeHint, nil,
			"path is %d bytes long; the limit is %d bytes", len(p), MaxPathBytes)
	}
	if strings.IndexByte(p, '\\') >= 0 {
		return "", newError(CodeInvalidPath, fmt.Sprintf(`separate directories with "/", e.g. %s`,
			quote(strings.ReplaceAll(p, `\`, "/"))), nil, "path %s contains a backslash", quote(p))
	}
	if strings.Trim(p, "/") == "" {
		// "", "/", "//": the root. Accepting a lone "/" is harmless and is how
		// people naturally say "the top of the repository".
		if allowRoot {
			return "", nil
		}
		return "", newError(CodeInvalidPath, `give a path relative to the repository root, e.g. "src/main.go"`, nil,
			"file path is empty")
	}
	if p[0] == '/' {
		return "", newError(CodeInvalidPath,
			fmt.Sprintf("use a path relative to the repository root, e.g. %s", quote(strings.TrimLeft(p, "/"))),
			nil, "path %s is absolute", quote(p))
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", newError(CodeInvalidPath, relativeHint, nil, "path %s leaves the repository", quote(p))
	}
	if c == "." {
		if allowRoot {
			return "", nil
		}
		return "", newError(CodeInvalidPath, relativeHint, nil, "path %s names the repository root, not a file", quote(p))
	}
	for part := range strings.SplitSeq(c, "/") {
		if len(part) > MaxComponentBytes {
			return "", newError(CodeInvalidPath, relativeHint, nil,
				"path component %s is %d bytes long; the limit is %d bytes", quote(part), len(part), MaxComponentBytes)
		}
	}
	if hasGitComponent(c) {
		return "", gitError(p)
	}
	return c, nil
}

func gitError(p string) *Error {
	return newError(CodeInvalidPath, "only the files of the working tree can be read", nil,
		"path %s is inside the git metadata directory (.git)", quote(p))
}

// hasGitComponent reports whether any element of the clean path p is ".git"
// in any letter case.
func hasGitComponent(p string) bool {
	for part := range strings.SplitSeq(p, "/") {
		if strings.EqualFold(part, ".git") {
			return true
		}
	}
	return false
}

// resolve follows the symbolic links in the clean path p (as returned by
// CleanPath; "" is the root) and returns the link-free path and the Lstat
// information of its final element, which is never a symlink. user is the
// path as the user wrote it, for messages.
//
// os.Root alone would already keep every lookup inside the tree; resolve
// exists so that a link inside the tree cannot lead into .git, and so that
// special files are seen before they are opened (opening a FIFO blocks).
// Link targets are resolved lexically against a prefix that has just been
// checked to hold no links, so ".." in a target means the real parent.
func (t *Tree) resolve(p, user string) (string, fs.FileInfo, error) {
	resolved, fi, _, err := t.lookup(p, user, false)
	return resolved, fi, err
}

// openFile is resolve that also opens the final element when it is a
// regular file (f is nil otherwise), from the directory handle the lookup
// already holds rather than walking the path a second time.
func (t *Tree) openFile(p, user string) (string, fs.FileInfo, *os.File, error) {
	return t.lookup(p, user, true)
}

func (t *Tree) lookup(p, user string, open bool) (string, fs.FileInfo, *os.File, error) {
	for hops := 0; ; hops++ {
		if p == "" {
			fi, err := t.root.Stat(".")
			if err != nil {
				return "", nil, nil, fmt.Errorf("files: stat tree root: %w", err)
			}
			return "", fi, nil, nil
		}
		fi, link, at, f, err := t.lstatPath(p, open)
		if err != nil {
			return "", nil, nil, lookupError(user, err)
		}
		if at < 0 {
			return p, fi, f, nil
		}
		if hops == maxSymlinks {
			return "", nil, nil, newError(CodeInvalidPath, relativeHint, nil,
				"path %s goes through too many symbolic links", quote(user))
		}
		if link == "" || link[0] == '/' {
			// os.Root refuses absolute link targets too; we say why in words.
			return "", nil, nil, escapeError(user)
		}
		parts := strings.Split(p, "/")
		np := path.Join(strings.Join(parts[:at], "/"), link, strings.Join(parts[at+1:], "/"))
		switch {
		case np == ".." || strings.HasPrefix(np, "../"):
			return "", nil, nil, escapeError(user)
		case np == ".":
			np = ""
		case hasGitComponent(np):
			return "", nil, nil, gitError(user)
		}
		p = np
	}
}

// lstatPath looks at every element of the clean, non-empty path p in turn,
// descending through sub-roots so each step costs one lstat and one open. It
// stops at the first symbolic link and returns its target and index; at is
// -1 when p holds no link, and fi then describes its final element, which is
// opened when open is set and it is a regular file.
func (t *Tree) lstatPath(p string, open bool) (fi fs.FileInfo, link string, at int, f *os.File, err error) {
	dir := t.root
	defer func() {
		if dir != t.root {
			dir.Close()
		}
	}()
	parts := strings.Split(p, "/")
	for i, name := range parts {
		fi, err = dir.Lstat(name)
		if err != nil {
			return nil, "", i, nil, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			link, err = dir.Readlink(name)
			return fi, link, i, nil, err
		}
		if i == len(parts)-1 {
			break
		}
		if !fi.IsDir() {
			// "a.txt/b": the POSIX answer is ENOTDIR; for a user it is simply not there.
			return nil, "", i, nil, fs.ErrNotExist
		}
		sub, err := dir.OpenRoot(name)
		if err != nil {
			return nil, "", i, nil, err
		}
		if dir != t.root {
			dir.Close()
		}
		dir = sub
	}
	if open && fi.Mode().IsRegular() {
		name := parts[len(parts)-1]
		if f, err = dir.Open(name); err != nil {
			return nil, "", len(parts) - 1, nil, err
		}
		// The name may have been swapped (for another file or a link) between
		// the lstat and the open: insist on the very file that was looked at.
		st, err := f.Stat()
		if err != nil || !os.SameFile(fi, st) {
			f.Close()
			return nil, "", len(parts) - 1, nil, fmt.Errorf("%s changed while being opened; try again: %w", name, cmp.Or(err, fs.ErrInvalid))
		}
		fi = st
	}
	return fi, "", -1, f, nil
}

func escapeError(user string) *Error {
	return newError(CodeInvalidPath, relativeHint, nil,
		"path %s is a symbolic link that leads outside the repository", quote(user))
}

// lookupError turns a file-system error met while looking up user into an
// *Error when the user can act on it, or wraps it as a server fault.
func lookupError(user string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return newError(CodeNotFound, "check the path with list_files or browse_directory; paths are relative to the repository root",
			err, "file not found: %s", quote(user))
	case errors.Is(err, syscall.ELOOP):
		return newError(CodeInvalidPath, relativeHint, err, "path %s goes through too many symbolic links", quote(user))
	case errors.Is(err, syscall.ENAMETOOLONG):
		return newError(CodeInvalidPath, relativeHint, err, "path %s is too long", quote(user))
	}
	return fmt.Errorf("files: look up %s: %w", quote(user), err)
}
