package repos

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/cidx/cidx/internal/gitcli"
)

// readmeNames are tried in order for a repository's summary.
var readmeNames = []string{"README.md", "README.rst", "README.txt", "README", "readme.md", "Readme.md", "README.markdown"}

// writeCatalog regenerates DATA_DIR/meta/ALIAS.md from the repository's
// current snapshot. The text depends only on the repository (no clock, no
// randomness), so regenerating an unchanged repository changes nothing.
func (s *Service) writeCatalog(ctx context.Context, alias string) error {
	g, err := s.Get(ctx, alias)
	if err != nil {
		return err
	}
	snap := s.snapshotDir(alias, g.Commit)
	last, err := s.git.LastCommit(ctx, s.gitDir(alias), g.Commit)
	if err != nil {
		return err
	}
	text := renderCatalog(g, last, readmeSummary(snap), topLevel(snap))
	return writeAtomic(filepath.Join(s.meta, alias+".md"), []byte(text))
}

func renderCatalog(g Golden, last gitcli.Commit, summary string, layout []string) string {
	var b strings.Builder
	var langs []string
	for _, l := range g.Stats.Languages {
		if l.Language != "other" && len(langs) < 8 {
			langs = append(langs, l.Language)
		}
	}
	fmt.Fprintf(&b, "---\nname: %s\nalias: %s\nurl: %s\ndefault_branch: %s\nlast_commit: %s\nlast_commit_date: %s\nlanguages: [%s]\n---\n\n",
		g.Alias, g.GlobalAlias(), yamlString(gitcli.Redact(g.Source)), g.Branch, last.Hash, last.Date, strings.Join(langs, ", "))
	fmt.Fprintf(&b, "# %s\n\n", g.Alias)
	if summary != "" {
		b.WriteString(summary + "\n\n")
	} else {
		b.WriteString("_This repository has no README._\n\n")
	}
	fmt.Fprintf(&b, "- **Read as**: `%s`\n", g.GlobalAlias())
	fmt.Fprintf(&b, "- **Repository URL**: %s\n", gitcli.Redact(g.Source))
	fmt.Fprintf(&b, "- **Default branch**: %s\n", g.Branch)
	fmt.Fprintf(&b, "- **Last commit**: `%s` %s %s (%s)\n", short(last.Hash), last.Date, oneLine(last.Subject), last.Author)
	fmt.Fprintf(&b, "- **Size**: %d files, %s\n\n", g.Stats.Files, humanBytes(g.Stats.Bytes))
	if len(g.Stats.Languages) > 0 {
		b.WriteString("## Languages\n\n| language | files | size | share |\n|---|---:|---:|---:|\n")
		for i, l := range g.Stats.Languages {
			if i == 12 {
				break
			}
			share := 0.0
			if g.Stats.Bytes > 0 {
				share = 100 * float64(l.Bytes) / float64(g.Stats.Bytes)
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %.1f%% |\n", l.Language, l.Files, humanBytes(l.Bytes), share)
		}
		b.WriteString("\n")
	}
	if len(layout) > 0 {
		b.WriteString("## Layout\n\n")
		for _, e := range layout {
			fmt.Fprintf(&b, "- %s\n", e)
		}
	}
	return b.String()
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func yamlString(s string) string {
	return "\"" + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + "\""
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

var (
	htmlTagRE  = regexp.MustCompile(`<[^>]*>`)
	imageRE    = regexp.MustCompile(`!\[[^\]]*\]\([^)]*\)`)
	linkRE     = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	refLinkRE  = regexp.MustCompile(`^\[[^\]]+\]:\s`)
	underlines = regexp.MustCompile(`^[=\-~^*#]{3,}\s*$`)
)

// readmeSummary returns the first prose paragraphs of the README (at most
// about 800 characters), without headings, badges, HTML or code blocks.
func readmeSummary(dir string) string {
	var data []byte
	for _, name := range readmeNames {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil {
			data = b
			break
		}
	}
	if data == nil || bytes.IndexByte(data, 0) >= 0 {
		return ""
	}
	var paras []string
	var cur []string
	inCode := false
	total := 0
	flush := func() {
		if len(cur) > 0 {
			p := strings.Join(cur, " ")
			paras = append(paras, p)
			total += len(p)
			cur = nil
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inCode = !inCode
			flush()
			continue
		}
		if inCode {
			continue
		}
		t = imageRE.ReplaceAllString(t, "")
		t = htmlTagRE.ReplaceAllString(t, "")
		t = linkRE.ReplaceAllString(t, "$1")
		t = strings.TrimSpace(t)
		if t == "" || strings.HasPrefix(t, "#") || underlines.MatchString(t) || refLinkRE.MatchString(t) ||
			strings.HasPrefix(t, "|") || strings.HasPrefix(t, "..") || strings.HasPrefix(t, ":") {
			flush()
			if total >= 400 || len(paras) >= 3 {
				break
			}
			continue
		}
		cur = append(cur, t)
	}
	flush()
	out := strings.Join(paras, "\n\n")
	if len(out) > 800 {
		cut := strings.LastIndex(out[:800], " ")
		if cut < 400 {
			cut = 800
		}
		out = strings.ToValidUTF8(out[:cut], "") + " ..."
	}
	return out
}

// topLevel lists the snapshot's top-level entries as markdown list items,
// directories first (with their file counts), then files.
func topLevel(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var dirs, fls []string
	for _, e := range entries { // os.ReadDir sorts by name
		if e.IsDir() {
			dirs = append(dirs, fmt.Sprintf("`%s/` (%d files)", e.Name(), countFiles(filepath.Join(dir, e.Name()))))
		} else {
			fls = append(fls, fmt.Sprintf("`%s`", e.Name()))
		}
	}
	res := append(dirs, fls...)
	if len(res) > 40 {
		res = append(res[:40], fmt.Sprintf("... and %d more entries", len(res)-40))
	}
	return res
}

func countFiles(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

// writeAtomic replaces path with data so readers see the old or new file,
// never a partial one.
func writeAtomic(path string, data []byte) error {
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+strings.ToLower(rand.Text()[:10]))
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// IndexCatalog snapshots the catalog and has it indexed, so that
// search_code and regex_search answer on cidx-meta-global like on any
// repository ("which repository handles payments?"). The catalog is not a
// git repository: its files get git blob ids computed here, and the tree
// is named by a hash of its (path, blob) list, so an unchanged catalog
// costs one directory read. Each version is copied to its own snapshot
// directory, which search reads snippets from while DATA_DIR/meta changes.
func (s *Service) IndexCatalog(ctx context.Context) error {
	if s.indexer == nil {
		return nil
	}
	s.catalogMu.Lock()
	defer s.catalogMu.Unlock()
	entries, contents, tree, err := catalogTree(s.meta)
	if err != nil {
		return fmt.Errorf("read the catalog: %w", err)
	}
	snap := s.snapshotDir(MetaAlias, tree)
	if _, err := os.Stat(snap); errors.Is(err, fs.ErrNotExist) {
		tmp := filepath.Join(filepath.Dir(snap), ".tmp-"+strings.ToLower(rand.Text()[:10]))
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			return err
		}
		if err := writeFiles(tmp, entries, contents); err != nil {
			os.RemoveAll(tmp)
			return err
		}
		if err := os.Rename(tmp, snap); err != nil {
			os.RemoveAll(tmp)
			return err
		}
	}
	if err := s.indexer.IndexTree(ctx, MetaAlias, tree, snap, entries); err != nil {
		return fmt.Errorf("index the catalog: %w", err)
	}
	s.pruneCatalogSnapshots(tree)
	return nil
}

// writeFiles writes each entry's content into dir, through os.Root.
func writeFiles(dir string, entries []gitcli.TreeEntry, contents [][]byte) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for i, e := range entries {
		if err := root.WriteFile(e.Path, contents[i], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// catalogTree lists the catalog's files (sorted, dot files left out) as
// tree entries with git blob ids, their contents, and a name for the tree.
func catalogTree(dir string) ([]gitcli.TreeEntry, [][]byte, string, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, "", err
	}
	var entries []gitcli.TreeEntry
	var contents [][]byte
	tree := sha1.New()
	for _, de := range des { // ReadDir sorts by name
		if !de.Type().IsRegular() || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, nil, "", err
		}
		blob := sha1.New()
		fmt.Fprintf(blob, "blob %d\x00", len(data))
		blob.Write(data)
		e := gitcli.TreeEntry{Mode: "100644", Blob: hex.EncodeToString(blob.Sum(nil)), Size: int64(len(data)), Path: de.Name()}
		fmt.Fprintf(tree, "%s %s\n", e.Path, e.Blob)
		entries = append(entries, e)
		contents = append(contents, data)
	}
	return entries, contents, hex.EncodeToString(tree.Sum(nil)), nil
}

// pruneCatalogSnapshots keeps the current catalog snapshot and the newest
// other one (searches may still read it), and removes the rest.
func (s *Service) pruneCatalogSnapshots(current string) {
	dir := filepath.Join(s.repoDir(MetaAlias), "snapshots")
	des, _ := os.ReadDir(dir)
	type snap struct {
		name string
		mod  int64
	}
	var others []snap
	for _, de := range des {
		if de.Name() == current {
			continue
		}
		if info, err := de.Info(); err == nil {
			others = append(others, snap{de.Name(), info.ModTime().UnixNano()})
		}
	}
	sort.Slice(others, func(i, j int) bool { return others[i].mod > others[j].mod })
	for i, o := range others {
		if i > 0 || strings.HasPrefix(o.name, ".tmp-") {
			os.RemoveAll(filepath.Join(dir, o.name))
		}
	}
}
