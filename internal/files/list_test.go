package files

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func listFixture(t *testing.T) (string, *Tree) {
	dir, tr := writeTree(t, map[string]string{
		".gitignore":             "*.log\nbuild/\n/secret.txt\n!important.log\n",
		"main.go":                "package main\n",
		"README.md":              "# readme\n",
		"secret.txt":             "ignored at the root\n",
		"important.log":          "kept by negation\n",
		"debug.log":              "ignored\n",
		"src/app.py":             "print('app')\n",
		"src/util.py":            "pass\n",
		"src/Readme.MD":          "upper-case extension\n",
		"src/secret.txt":         "not ignored: the rule is anchored\n",
		"src/sub/deep.go":        "package sub\n",
		"src/sub/x.log":          "ignored\n",
		"build/out.go":           "ignored directory\n",
		"src/build/gen.go":       "ignored directory at any depth\n",
		".git/config":            "[core]\n",
		".git/HEAD":              "ref: refs/heads/main\n",
		".code-indexer/idx.json": "{}\n",
		"sub/.GIT/x":             "never listed\n",
		"sub/.code-indexer/y":    "never listed\n",
		"docs/a.txt":             "docs\n",
		"empty/":                 "",
	})
	symlink(t, dir, "link.go", "main.go")             // inside: listed as a file
	symlink(t, dir, "escape.txt", "/etc/passwd")      // outside: not listed
	symlink(t, dir, "up.txt", "../outside.txt")       // outside: not listed
	symlink(t, dir, "dirlink", "src")                 // a directory: never followed
	symlink(t, dir, "gitlink.txt", ".git/config")     // into .git: not listed
	symlink(t, dir, "dangling.txt", "does-not-exist") // nothing there: not listed
	return dir, tr
}

func listPaths(t *testing.T, tr *Tree, o ListOptions) []string {
	t.Helper()
	files, total, truncated, err := tr.List(o)
	if err != nil {
		t.Fatalf("List(%+v): %v", o, err)
	}
	if total != len(files) || truncated {
		t.Fatalf("List(%+v): total %d, truncated %v for %d files", o, total, truncated, len(files))
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	return paths
}

func wantPaths(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func TestListSkipsAndRecursion(t *testing.T) {
	_, tr := listFixture(t)
	wantPaths(t, "root, recursive", listPaths(t, tr, ListOptions{Recursive: true}),
		".gitignore", "docs/a.txt", "important.log", "link.go", "main.go", "README.md",
		"src/app.py", "src/Readme.MD", "src/secret.txt", "src/sub/deep.go", "src/util.py")
	wantPaths(t, "root, direct children", listPaths(t, tr, ListOptions{}),
		".gitignore", "important.log", "link.go", "main.go", "README.md")
	// Recursive includes the files directly in Dir; non-recursive has only those.
	wantPaths(t, "src, recursive", listPaths(t, tr, ListOptions{Dir: "src", Recursive: true}),
		"src/app.py", "src/Readme.MD", "src/secret.txt", "src/sub/deep.go", "src/util.py")
	wantPaths(t, "src, direct children", listPaths(t, tr, ListOptions{Dir: "src/"}),
		"src/app.py", "src/Readme.MD", "src/secret.txt", "src/util.py")
	wantPaths(t, "empty dir", listPaths(t, tr, ListOptions{Dir: "empty", Recursive: true}))
	// A directory that is itself skipped lists nothing rather than its contents.
	wantPaths(t, "ignored dir", listPaths(t, tr, ListOptions{Dir: "build", Recursive: true}))
	wantPaths(t, ".code-indexer", listPaths(t, tr, ListOptions{Dir: ".code-indexer", Recursive: true}))
	// A symbolic link to a directory is resolved when named as Dir.
	wantPaths(t, "dirlink", listPaths(t, tr, ListOptions{Dir: "dirlink"}),
		"src/app.py", "src/Readme.MD", "src/secret.txt", "src/util.py")

	files, _, _, err := tr.List(ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Path == "link.go" && (f.SizeBytes != int64(len("package main\n")) || *f.Language != "go") {
			t.Errorf("link.go: %+v", f)
		}
		if f.ModifiedAt.IsZero() || f.ModifiedAt.Location() != time.UTC {
			t.Errorf("%s: ModifiedAt %v", f.Path, f.ModifiedAt)
		}
	}
}

func TestListErrors(t *testing.T) {
	_, tr := listFixture(t)
	_, _, _, err := tr.List(ListOptions{Dir: "nope"})
	wantError(t, err, CodeNotFound, `Path does not exist: "nope"`)
	_, _, _, err = tr.List(ListOptions{Dir: "main.go"})
	wantError(t, err, CodeNotADirectory, `Not a directory: "main.go"`)
	_, _, _, err = tr.List(ListOptions{Dir: "../x"})
	wantError(t, err, CodeInvalidPath, "leaves the repository")
	_, _, _, err = tr.List(ListOptions{Dir: ".git"})
	wantError(t, err, CodeInvalidPath, "git metadata directory")
	_, _, _, err = tr.List(ListOptions{SortBy: "name"})
	wantError(t, err, CodeInvalidArgument, `sort_by "name" is not supported`, `"path", "size" or "modified_at"`)
	_, _, _, err = tr.List(ListOptions{Limit: -1})
	wantError(t, err, CodeInvalidArgument, "limit")
}

func TestListFilters(t *testing.T) {
	_, tr := listFixture(t)
	all := ListOptions{Recursive: true}
	for _, lang := range []string{"python", "PYTHON", "py", ".py", ".PY"} {
		o := all
		o.Language = lang
		wantPaths(t, "language "+lang, listPaths(t, tr, o), "src/app.py", "src/util.py")
	}
	for _, lang := range []string{"markdown", "md"} {
		o := all
		o.Language = lang
		wantPaths(t, "language "+lang, listPaths(t, tr, o), "README.md", "src/Readme.MD")
	}
	o := all
	o.Language = "log" // an extension without a language name
	wantPaths(t, "language log", listPaths(t, tr, o), "important.log")

	for pattern, want := range map[string][]string{
		"*.py":        {"src/app.py", "src/util.py"},
		"src/*.go":    nil,
		"src/**/*.go": {"src/sub/deep.go"},
		"**/*.go":     {"link.go", "main.go", "src/sub/deep.go"},
		"/*.go":       {"link.go", "main.go"},
		"src/":        {"src/app.py", "src/Readme.MD", "src/secret.txt", "src/sub/deep.go", "src/util.py"},
		"src/sub/*":   {"src/sub/deep.go"},
		"[dm]*":       {"main.go", "src/sub/deep.go"}, // names, not directories
	} {
		o := all
		o.Pattern = pattern
		wantPaths(t, "pattern "+pattern, listPaths(t, tr, o), want...)
	}
	// Pattern and Dir combine; a name pattern applies at every depth below Dir.
	wantPaths(t, "src + *.go", listPaths(t, tr, ListOptions{Dir: "src", Recursive: true, Pattern: "*.go"}), "src/sub/deep.go")
	wantPaths(t, "src non-recursive + *.go", listPaths(t, tr, ListOptions{Dir: "src", Pattern: "*.go"}))
}

func TestListSortAndLimit(t *testing.T) {
	dir, tr := writeTree(t, map[string]string{
		"b.txt":   "12345",
		"A.txt":   "1",
		"c/d.txt": "123",
		"a.txt":   "1234567",
	})
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, p := range []string{"a.txt", "c/d.txt", "A.txt", "b.txt"} {
		mt := base.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(filepath.Join(dir, p), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	wantPaths(t, "by path", listPaths(t, tr, ListOptions{Recursive: true, SortBy: "path"}),
		"A.txt", "a.txt", "b.txt", "c/d.txt")
	wantPaths(t, "by size", listPaths(t, tr, ListOptions{Recursive: true, SortBy: "size"}),
		"A.txt", "c/d.txt", "b.txt", "a.txt")
	wantPaths(t, "by modified_at", listPaths(t, tr, ListOptions{Recursive: true, SortBy: "modified_at"}),
		"a.txt", "c/d.txt", "A.txt", "b.txt")

	files, total, truncated, err := tr.List(ListOptions{Recursive: true, SortBy: "size", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || total != 4 || !truncated || files[0].Path != "A.txt" || files[1].Path != "c/d.txt" {
		t.Fatalf("limit 2: %+v total %d truncated %v", files, total, truncated)
	}
	files, total, truncated, err = tr.List(ListOptions{Recursive: true, Limit: 4})
	if err != nil || len(files) != 4 || total != 4 || truncated {
		t.Fatalf("limit 4: %d files, total %d, truncated %v, %v", len(files), total, truncated, err)
	}
	// An empty listing is an empty slice, not nil (it marshals as []).
	files, _, _, err = tr.List(ListOptions{Pattern: "*.none"})
	if err != nil || files == nil {
		t.Fatalf("empty listing: %#v, %v", files, err)
	}
}

func TestCompareFold(t *testing.T) {
	paths := []string{"b", "B", "a", "Ä", "ä", "A/b", "a/B", "a.txt"}
	slices.SortFunc(paths, comparePaths)
	// Case-insensitive order, ties broken by bytes.
	for i := 1; i < len(paths); i++ {
		a, b := paths[i-1], paths[i]
		if la, lb := strings.ToLower(a), strings.ToLower(b); la > lb || la == lb && a > b {
			t.Errorf("%q sorted before %q", a, b)
		}
	}
}
