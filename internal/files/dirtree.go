package files

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"
)

// DefaultTreeExcludes are always excluded from DirTree, on top of ".git" and
// ".code-indexer" (which no option can show) and TreeOptions.Exclude.
var DefaultTreeExcludes = []string{
	".svn", ".hg", "node_modules", "vendor", "__pycache__", ".pytest_cache",
	".tox", ".venv", "venv", ".idea", ".vscode", "*.pyc", "*.pyo",
}

// TreeOptions shapes a DirTree.
type TreeOptions struct {
	// Path is the directory drawn, relative to the root ("" = root).
	Path string
	// MaxDepth is how many directory levels are expanded: 0 means 3, other
	// values are clamped to 1–10. A directory at that depth is shown, not
	// opened ("name/ [...]").
	MaxDepth int
	// MaxFilesPerDir caps the files shown per directory: 0 means 50, other
	// values are clamped to 1–200. The rest are counted ("[+N more files]").
	MaxFilesPerDir int
	// Include, when set, keeps only files matching one of these globs, and
	// drops directories with no such file below them.
	Include []string
	// Exclude drops matching files and directories, in addition to
	// DefaultTreeExcludes. Globs follow Patterns in the package
	// documentation: without "/" they match an entry's name, with "/" its
	// path from the repository root; a trailing "/" matches directories only.
	Exclude []string
	// ShowStats appends a blank line and "<D> directories, <F> files".
	ShowStats bool
	// IncludeHidden shows entries whose name starts with ".".
	IncludeHidden bool
	// RootName is the name on the root line; "" means the directory's own
	// name (the tree directory's base name for the repository root). A
	// caller can pass the repository alias, since a snapshot directory's
	// name means nothing to a user.
	RootName string
}

// Node is one entry of a DirTree. The JSON names are the contract's, so an
// adapter can return the tree as is.
type Node struct {
	Name        string  `json:"name"`         // entry name
	Path        string  `json:"path"`         // path from the repository root ("" for the root)
	IsDirectory bool    `json:"is_directory"` // directory (Children non-nil) or file (Children nil)
	Truncated   bool    `json:"truncated"`    // depth limit reached (no Children) or files capped (HiddenCount > 0)
	HiddenCount int     `json:"hidden_count"` // files left out by MaxFilesPerDir
	Children    []*Node `json:"children"`     // directories first, then files, each case-insensitively sorted; null for a file
}

// depthCut reports whether n is a directory left unopened by the depth limit.
func (n *Node) depthCut() bool { return n.IsDirectory && n.Truncated && len(n.Children) == 0 }

// TreeResult is a drawn directory tree.
type TreeResult struct {
	TreeString       string // the tree drawn in ASCII, see DirTree
	Root             *Node  // the same tree as data
	TotalDirectories int    // directories shown, the root excluded
	TotalFiles       int    // files shown, hidden ones excluded
	MaxDepthReached  bool   // some directory was left unopened by MaxDepth
}

// DirTree draws the directory o.Path as a tree, like the tree command.
//
// TreeString has a root line "name/", then one line per entry prefixed with
// "|-- " ("+-- " for the last one) under continuation columns of "|   " or
// four spaces; a directory left unopened by the depth limit reads
// "name/ [...]" and capped files are counted on a last line
// "+-- [+N more files]". With ShowStats a blank line and
// "<D> directories, <F> files" follow. Lines are joined by "\n", with no
// final newline.
//
// The same entries as List are left out (".git", ".code-indexer", the root
// .gitignore), plus the excludes and, unless IncludeHidden, dot entries.
// Symbolic links are never followed; a link to a regular file inside the
// tree is shown as a file, other links are not shown.
func (t *Tree) DirTree(o TreeOptions) (*TreeResult, error) {
	dir, err := t.openDir(o.Path)
	if err != nil {
		return nil, err
	}
	b := &treeBuilder{
		t:             t,
		ign:           t.gitignore(),
		maxDepth:      clampDefault(o.MaxDepth, 3, 1, 10),
		maxFiles:      clampDefault(o.MaxFilesPerDir, 50, 1, 200),
		includeHidden: o.IncludeHidden,
	}
	for _, p := range slices.Concat(DefaultTreeExcludes, o.Exclude) {
		b.exclude = append(b.exclude, newRule(p))
	}
	for _, p := range o.Include {
		b.include = append(b.include, newRule(p))
	}

	root := &Node{Path: dir, IsDirectory: true, Children: []*Node{}}
	if dir == "" || !t.skipped(dir, b.ign) {
		root = b.build(dir, 0)
	}
	root.Name = path.Base(dir)
	if dir == "" {
		root.Name = t.name
	}
	root.Name = cmp.Or(o.RootName, root.Name)

	res := &TreeResult{Root: root}
	lines := []string{root.Name + "/"}
	res.draw(root, "", &lines)
	if o.ShowStats {
		lines = append(lines, "", fmt.Sprintf("%d directories, %d files", res.TotalDirectories, res.TotalFiles))
	}
	res.TreeString = strings.Join(lines, "\n")
	return res, nil
}

// draw appends the lines of n's children under prefix and counts them.
func (res *TreeResult) draw(n *Node, prefix string, lines *[]string) {
	for i, c := range n.Children {
		last := i == len(n.Children)-1 && !n.Truncated
		connector, extension := "|-- ", "|   "
		if last {
			connector, extension = "+-- ", "    "
		}
		switch {
		case !c.IsDirectory:
			res.TotalFiles++
			*lines = append(*lines, prefix+connector+c.Name)
		case c.depthCut():
			res.TotalDirectories++
			res.MaxDepthReached = true
			*lines = append(*lines, prefix+connector+c.Name+"/ [...]")
		default:
			res.TotalDirectories++
			*lines = append(*lines, prefix+connector+c.Name+"/")
			res.draw(c, prefix+extension, lines)
		}
	}
	if n.HiddenCount > 0 {
		*lines = append(*lines, fmt.Sprintf("%s+-- [+%d more files]", prefix, n.HiddenCount))
	}
}

func clampDefault(v, def, lo, hi int) int {
	if v == 0 {
		return def
	}
	return min(max(v, lo), hi)
}

type treeBuilder struct {
	t                *Tree
	ign              *gitignore
	exclude, include []rule
	maxDepth         int
	maxFiles         int
	includeHidden    bool
}

// treeEntry is a directory entry that passed the filters.
type treeEntry struct{ name, path string }

// build returns the node of directory dir (link-free, "" = root) at depth.
func (b *treeBuilder) build(dir string, depth int) *Node {
	n := &Node{Name: path.Base(dir), Path: dir, IsDirectory: true, Children: []*Node{}}
	if depth >= b.maxDepth {
		n.Truncated = true
		return n
	}
	dirs, files := b.entries(dir)
	for _, d := range dirs {
		c := b.build(d.path, depth+1)
		if len(b.include) > 0 && len(c.Children) == 0 && !(c.depthCut() && b.hasFiles(d.path)) {
			continue // nothing included below it
		}
		n.Children = append(n.Children, c)
	}
	if len(files) > b.maxFiles {
		n.Truncated, n.HiddenCount = true, len(files)-b.maxFiles
		files = files[:b.maxFiles]
	}
	for _, f := range files {
		n.Children = append(n.Children, &Node{Name: f.name, Path: f.path})
	}
	return n
}

// hasFiles reports whether some file below dir would be shown given enough
// depth. It decides whether a directory cut by the depth limit stays in an
// Include-filtered tree, and stops at the first file found.
func (b *treeBuilder) hasFiles(dir string) bool {
	dirs, files := b.entries(dir)
	return len(files) > 0 || slices.ContainsFunc(dirs, func(d treeEntry) bool { return b.hasFiles(d.path) })
}

// entries reads dir and returns its visible sub-directories and files, each
// sorted. An unreadable directory is shown empty rather than failing the tree.
func (b *treeBuilder) entries(dir string) (dirs, files []treeEntry) {
	// A directory opened through the root lists entries with their lstat
	// information taken relative to the open directory, never by path.
	f, err := b.t.root.Open(cmp.Or(dir, "."))
	if err != nil {
		return nil, nil
	}
	des, _ := f.ReadDir(-1)
	f.Close()
	for _, de := range des {
		name := de.Name()
		p := path.Join(dir, name)
		isDir := de.IsDir()
		if alwaysSkipped(name) || (!b.includeHidden && name[0] == '.') ||
			matchesAny(b.exclude, p, isDir) || b.ign.match(p, isDir) {
			continue
		}
		if isDir {
			dirs = append(dirs, treeEntry{name, p})
			continue
		}
		if len(b.include) > 0 && !matchesAny(b.include, p, false) {
			continue
		}
		if _, ok := b.t.fileInfo(p, de); ok {
			files = append(files, treeEntry{name, p})
		}
	}
	byName := func(a, b treeEntry) int { return comparePaths(a.name, b.name) }
	slices.SortFunc(dirs, byName)
	slices.SortFunc(files, byName)
	return dirs, files
}

func matchesAny(rules []rule, p string, isDir bool) bool {
	return slices.ContainsFunc(rules, func(r rule) bool { return r.matches(p, isDir) })
}
