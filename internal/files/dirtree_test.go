package files

import (
	"encoding/json"
	"strings"
	"testing"
)

func treeFixture(t *testing.T) *Tree {
	dir, tr := writeTree(t, map[string]string{
		"README.md":                 "",
		"go.mod":                    "",
		"cmd/cidx/main.go":          "",
		"internal/files/a.go":       "",
		"internal/files/B.go":       "",
		"internal/files/c.go":       "",
		"internal/store/s.go":       "",
		"internal/store/schema.pyc": "",
		"docs/guide.md":             "",
		"node_modules/x/index.js":   "",
		"vendor/v.go":               "",
		".github/workflows/ci.yml":  "",
		".env":                      "",
		".git/HEAD":                 "",
		".gitignore":                "*.tmp\n",
		"scratch.tmp":               "",
		"empty/":                    "",
	})
	symlink(t, dir, "internal/files/link.go", "a.go")      // shown as a file
	symlink(t, dir, "internal/files/out.go", "/etc/hosts") // leaves the tree: not shown
	symlink(t, dir, "cmdlink", "cmd")                      // a directory link: not shown, not followed
	return tr
}

func drawTree(t *testing.T, tr *Tree, o TreeOptions) *TreeResult {
	t.Helper()
	res, err := tr.DirTree(o)
	if err != nil {
		t.Fatalf("DirTree(%+v): %v", o, err)
	}
	return res
}

func wantTree(t *testing.T, what string, got *TreeResult, want string) {
	t.Helper()
	want = strings.TrimPrefix(want, "\n")
	if got.TreeString != want {
		t.Errorf("%s: tree_string\n%s\nwant\n%s", what, got.TreeString, want)
	}
}

func TestDirTreeGolden(t *testing.T) {
	tr := treeFixture(t)
	res := drawTree(t, tr, TreeOptions{RootName: "repo", ShowStats: true})
	wantTree(t, "defaults", res, `
repo/
|-- cmd/
|   +-- cidx/
|       +-- main.go
|-- docs/
|   +-- guide.md
|-- empty/
|-- internal/
|   |-- files/
|   |   |-- a.go
|   |   |-- B.go
|   |   |-- c.go
|   |   +-- link.go
|   +-- store/
|       +-- s.go
|-- go.mod
+-- README.md

7 directories, 9 files`)
	if res.TotalDirectories != 7 || res.TotalFiles != 9 || res.MaxDepthReached {
		t.Errorf("counts: %d dirs, %d files, depth reached %v", res.TotalDirectories, res.TotalFiles, res.MaxDepthReached)
	}
	r := res.Root
	if r.Name != "repo" || r.Path != "" || !r.IsDirectory || r.Truncated || len(r.Children) != 6 {
		t.Fatalf("root node: %+v", r)
	}
	files := r.Children[3].Children[0]
	if files.Path != "internal/files" || files.Name != "files" || len(files.Children) != 4 ||
		files.Children[1].Path != "internal/files/B.go" || files.Children[1].IsDirectory || files.Children[1].Children != nil {
		t.Fatalf("internal/files node: %+v", files)
	}

	// Without a RootName the root is named after the tree directory.
	if res := drawTree(t, tr, TreeOptions{MaxDepth: 1}); !strings.HasPrefix(res.TreeString, "repo/\n") {
		t.Errorf("default root name: %q", res.TreeString)
	}
}

func TestDirTreeDepth(t *testing.T) {
	tr := treeFixture(t)
	res := drawTree(t, tr, TreeOptions{RootName: "repo", MaxDepth: 1})
	wantTree(t, "depth 1", res, `
repo/
|-- cmd/ [...]
|-- docs/ [...]
|-- empty/ [...]
|-- internal/ [...]
|-- go.mod
+-- README.md`)
	if !res.MaxDepthReached || res.TotalDirectories != 4 || res.TotalFiles != 2 {
		t.Errorf("depth 1: reached %v, %d dirs, %d files", res.MaxDepthReached, res.TotalDirectories, res.TotalFiles)
	}
	if c := res.Root.Children[0]; !c.Truncated || c.Children == nil || len(c.Children) != 0 {
		t.Errorf("depth-cut node: %+v", c)
	}
	res = drawTree(t, tr, TreeOptions{Path: "internal", MaxDepth: 2})
	wantTree(t, "sub-path depth 2", res, `
internal/
|-- files/
|   |-- a.go
|   |-- B.go
|   |-- c.go
|   +-- link.go
+-- store/
    +-- s.go`)
	if res.Root.Path != "internal" || res.MaxDepthReached {
		t.Errorf("sub-path root %+v, reached %v", res.Root, res.MaxDepthReached)
	}
	// Clamping: -1 means 1.
	if res := drawTree(t, tr, TreeOptions{MaxDepth: -1}); !res.MaxDepthReached {
		t.Error("MaxDepth -1 was not clamped to 1")
	}
}

func TestDirTreeFileCap(t *testing.T) {
	tr := treeFixture(t)
	res := drawTree(t, tr, TreeOptions{Path: "internal", MaxFilesPerDir: 2})
	wantTree(t, "cap 2", res, `
internal/
|-- files/
|   |-- a.go
|   |-- B.go
|   +-- [+2 more files]
+-- store/
    +-- s.go`)
	files := res.Root.Children[0]
	if !files.Truncated || files.HiddenCount != 2 || len(files.Children) != 2 {
		t.Errorf("capped node: %+v", files)
	}
	if res.TotalFiles != 3 || res.MaxDepthReached {
		t.Errorf("capped counts: %d files", res.TotalFiles)
	}
	// The cap on the root: the last shown file is not drawn as last.
	res = drawTree(t, tr, TreeOptions{Path: "internal/files", MaxFilesPerDir: 1, ShowStats: true})
	wantTree(t, "cap on root", res, `
files/
|-- a.go
+-- [+3 more files]

0 directories, 1 files`)
}

func TestDirTreeIncludeExclude(t *testing.T) {
	tr := treeFixture(t)
	res := drawTree(t, tr, TreeOptions{RootName: "repo", Include: []string{"*.go"}})
	wantTree(t, "include *.go", res, `
repo/
|-- cmd/
|   +-- cidx/
|       +-- main.go
+-- internal/
    |-- files/
    |   |-- a.go
    |   |-- B.go
    |   |-- c.go
    |   +-- link.go
    +-- store/
        +-- s.go`)
	// Cut by depth, a directory stays only if something below it matches.
	res = drawTree(t, tr, TreeOptions{RootName: "repo", MaxDepth: 1, Include: []string{"*.md"}})
	wantTree(t, "include *.md, depth 1", res, `
repo/
|-- docs/ [...]
+-- README.md`)
	res = drawTree(t, tr, TreeOptions{RootName: "repo", MaxDepth: 1, Include: []string{"*.nothing"}})
	wantTree(t, "include matching nothing", res, "repo/")

	res = drawTree(t, tr, TreeOptions{RootName: "repo", MaxDepth: 2,
		Exclude: []string{"internal/store", "*.mod", "docs/"}})
	wantTree(t, "exclude", res, `
repo/
|-- cmd/
|   +-- cidx/ [...]
|-- empty/
|-- internal/
|   +-- files/ [...]
+-- README.md`)
}

func TestDirTreeHidden(t *testing.T) {
	tr := treeFixture(t)
	res := drawTree(t, tr, TreeOptions{RootName: "repo", MaxDepth: 1, IncludeHidden: true})
	// .git stays hidden; .gitignore'd scratch.tmp stays out.
	wantTree(t, "hidden", res, `
repo/
|-- .github/ [...]
|-- cmd/ [...]
|-- docs/ [...]
|-- empty/ [...]
|-- internal/ [...]
|-- .env
|-- .gitignore
|-- go.mod
+-- README.md`)
}

func TestDirTreeErrors(t *testing.T) {
	tr := treeFixture(t)
	_, err := tr.DirTree(TreeOptions{Path: "nope/deeper"})
	wantError(t, err, CodeNotFound, `Path does not exist: "nope/deeper"`)
	_, err = tr.DirTree(TreeOptions{Path: "go.mod"})
	wantError(t, err, CodeNotADirectory, "Not a directory")
	_, err = tr.DirTree(TreeOptions{Path: "../.."})
	wantError(t, err, CodeInvalidPath, "leaves the repository")
	_, err = tr.DirTree(TreeOptions{Path: ".git"})
	wantError(t, err, CodeInvalidPath, "git metadata directory")
}

func TestNodeJSON(t *testing.T) {
	tr := treeFixture(t)
	res := drawTree(t, tr, TreeOptions{Path: "cmd", RootName: "cmd"})
	got, err := json.Marshal(res.Root)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"cmd","path":"cmd","is_directory":true,"truncated":false,"hidden_count":0,"children":[` +
		`{"name":"cidx","path":"cmd/cidx","is_directory":true,"truncated":false,"hidden_count":0,"children":[` +
		`{"name":"main.go","path":"cmd/cidx/main.go","is_directory":false,"truncated":false,"hidden_count":0,"children":null}]}]}`
	if string(got) != want {
		t.Errorf("JSON\n%s\nwant\n%s", got, want)
	}
}
