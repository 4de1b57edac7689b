package files

import (
	"cmp"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// FileInfo describes one listed file.
type FileInfo struct {
	Path       string    // relative to the repository root, slash-separated
	SizeBytes  int64     // size in bytes (of the target, for a symbolic link)
	ModifiedAt time.Time // modification time, UTC
	Language   *string   // see Language; nil when unknown
}

// ListOptions selects and orders the files List returns.
type ListOptions struct {
	// Dir is the directory to list, relative to the root ("" = root). It must
	// exist, else an *Error "Path does not exist". If Dir is a symbolic link
	// to a directory inside the tree, its target is listed, under its own path.
	Dir string
	// Recursive lists every file below Dir, including those directly in it;
	// otherwise only the files directly in Dir.
	Recursive bool
	// Pattern optionally filters with a glob (see Patterns in the package
	// documentation): without "/" it matches the file name at any depth
	// ("*_test.go"); with "/" it matches the path from the repository root
	// ("src/**/*.go"); a trailing "/" means everything below ("src/").
	Pattern string
	// Language optionally filters by language name or file extension, case-
	// insensitively: "python", "py" and ".py" all select Python files.
	Language string
	// SortBy is "path" (default, case-insensitive), "size" or "modified_at",
	// all ascending, ties broken by path.
	SortBy string
	// Limit caps the files returned; 0 means no limit.
	Limit int
}

// List returns the regular files below o.Dir that pass the filters, sorted,
// at most o.Limit of them; total counts all matches before the limit and
// truncated reports total > len(files).
//
// It never returns anything under a ".git" (any letter case) or
// ".code-indexer" directory, nor paths ignored by the root .gitignore.
// Symbolic links are never followed while walking; a link is listed as a
// file only when it leads, inside the tree and outside .git, to a regular
// file, so that everything listed can be passed to Read.
func (t *Tree) List(o ListOptions) (files []FileInfo, total int, truncated bool, err error) {
	if o.Limit < 0 {
		return nil, 0, false, newError(CodeInvalidArgument, "omit limit (or pass 0) to list every file", nil,
			"limit must be an integer >= 1")
	}
	order, err := sortOrder(o.SortBy)
	if err != nil {
		return nil, 0, false, err
	}
	var pat *rule
	if o.Pattern != "" {
		if len(o.Pattern) > MaxPathBytes {
			return nil, 0, false, newError(CodeInvalidArgument, "", nil, "pattern is longer than %d bytes", MaxPathBytes)
		}
		p := o.Pattern
		if strings.HasSuffix(p, "/") {
			p += "**"
		}
		r := newRule(p)
		pat = &r
	}
	lang := strings.ToLower(strings.TrimPrefix(o.Language, "."))

	dir, err := t.openDir(o.Dir)
	if err != nil {
		return nil, 0, false, err
	}
	files = []FileInfo{} // never nil: an empty listing is [] in JSON
	ign := t.gitignore()
	if dir != "" && t.skipped(dir, ign) {
		return files, 0, false, nil
	}
	start := cmp.Or(dir, ".")

	err = fs.WalkDir(t.root.FS(), start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start {
				return err
			}
			return nil // an unreadable sub-directory costs its files, not the listing
		}
		if p == start {
			return nil
		}
		isDir := d.IsDir()
		if alwaysSkipped(d.Name()) || ign.match(p, isDir) {
			if isDir {
				return fs.SkipDir
			}
			return nil
		}
		if isDir {
			if !o.Recursive {
				return fs.SkipDir
			}
			return nil
		}
		if pat != nil && !pat.matches(p, false) {
			return nil
		}
		if lang != "" && !languageMatches(p, lang) {
			return nil
		}
		info, ok := t.fileInfo(p, d)
		if !ok {
			return nil
		}
		files = append(files, FileInfo{
			Path:       p,
			SizeBytes:  info.Size(),
			ModifiedAt: info.ModTime().UTC(),
			Language:   Language(p),
		})
		return nil
	})
	if err != nil {
		return nil, 0, false, lookupError(o.Dir, err)
	}
	slices.SortFunc(files, order)
	total = len(files)
	if o.Limit > 0 && total > o.Limit {
		files, truncated = files[:o.Limit], true
	}
	return files, total, truncated, nil
}

// fileInfo returns the information of the walked entry p if it is a file to
// list: a regular file, or a symbolic link to one inside the tree.
func (t *Tree) fileInfo(p string, d fs.DirEntry) (fs.FileInfo, bool) {
	switch typ := d.Type(); {
	case typ.IsRegular():
		info, err := d.Info()
		return info, err == nil
	case typ&fs.ModeSymlink != 0:
		_, info, err := t.resolve(p, p)
		return info, err == nil && info.Mode().IsRegular()
	}
	return nil, false // devices, sockets, FIFOs: nothing Read would serve
}

// languageMatches reports whether the file p has language or extension want
// (lower case, without a leading dot).
func languageMatches(p, want string) bool {
	if l := Language(p); l != nil && *l == want {
		return true
	}
	ext := path.Ext(p)
	return ext != "" && strings.EqualFold(ext[1:], want)
}

func sortOrder(by string) (func(a, b FileInfo) int, error) {
	byPath := func(a, b FileInfo) int { return comparePaths(a.Path, b.Path) }
	switch by {
	case "", "path":
		return byPath, nil
	case "size":
		return func(a, b FileInfo) int { return cmp.Or(cmp.Compare(a.SizeBytes, b.SizeBytes), byPath(a, b)) }, nil
	case "modified_at":
		return func(a, b FileInfo) int { return cmp.Or(a.ModifiedAt.Compare(b.ModifiedAt), byPath(a, b)) }, nil
	}
	return nil, newError(CodeInvalidArgument, `use "path", "size" or "modified_at"`, nil, "sort_by %s is not supported", quote(by))
}

// comparePaths orders case-insensitively, then by bytes so the order is total.
func comparePaths(a, b string) int {
	return cmp.Or(compareFold(a, b), strings.Compare(a, b))
}

// compareFold compares a and b rune by rune after lower-casing, without
// allocating lower-cased copies.
func compareFold(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if c := cmp.Compare(unicode.ToLower(ra), unicode.ToLower(rb)); c != 0 {
			return c
		}
		a, b = a[na:], b[nb:]
	}
	return cmp.Compare(len(a), len(b))
}

// alwaysSkipped reports whether an entry name is never listed: the git
// metadata directory (in any letter case, as CleanPath refuses it) and the
// indexer's own data.
func alwaysSkipped(name string) bool {
	return strings.EqualFold(name, ".git") || name == ".code-indexer"
}

// skipped reports whether the clean, non-empty path p lies in, or is, a
// directory that listings never show.
func (t *Tree) skipped(p string, ign *gitignore) bool {
	for part := range strings.SplitSeq(p, "/") {
		if alwaysSkipped(part) {
			return true
		}
	}
	return ign.ignored(p, true)
}

// openDir validates and resolves a directory option ("" = root) and returns
// its link-free path.
func (t *Tree) openDir(dir string) (string, error) {
	clean, err := CleanPath(dir, true)
	if err != nil {
		return "", err
	}
	resolved, fi, err := t.resolve(clean, dir)
	if e := (*Error)(nil); errors.As(err, &e) && e.Code == CodeNotFound {
		return "", newError(CodeNotFound, "check the directory with directory_tree, or leave the path empty for the repository root",
			e, "Path does not exist: %s", quote(clean))
	}
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", newError(CodeNotADirectory, "it is a file: read it with get_file_content", nil,
			"Not a directory: %s", quote(clean))
	}
	return resolved, nil
}
