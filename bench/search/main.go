// Command search measures cidx's search on a real corpus, in one run:
//
//   - indexing: a full index of the Go source tree ($(go env GOROOT)/src as a
//     git repository: trigram + BM25 + builtin vectors), its size on disk
//     against the indexed source, the re-index time after changing one
//     file, and the process's memory with the index loaded;
//
//   - latency: search_code p50/p99 per mode over the evaluation queries;
//
//   - retrieval quality: MRR@10 and Recall@10 of fts, semantic and hybrid on
//     queries mined from code no one here wrote: each documented function
//     of the Go tree, queried by the first sentence of its doc comment
//     (without the leading function name) against a copy of the tree with
//     every doc comment removed, as CodeSearchNet does; and, with -history
//     REPO, commit subjects of a real git history against the files each
//     commit changed.
//
//     go run ./bench/search [-goroot DIR] [-queries 500] [-history REPO] [-skip-perf]
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cidx/cidx/internal/app"
	"github.com/cidx/cidx/internal/jobs"
	"github.com/cidx/cidx/internal/search"
)

func main() {
	goroot := flag.String("goroot", filepath.Join(runtime.GOROOT(), "src"), "Go source tree to index")
	nq := flag.Int("queries", 500, "documented functions to query (deterministic sample)")
	history := flag.String("history", "", "a git repository whose commit subjects are queried against the files they changed")
	nHistory := flag.Int("history-queries", 300, "commits to query from -history")
	skipPerf := flag.Bool("skip-perf", false, "skip the full-tree indexing measurements")
	keep := flag.String("keep", "", "keep the data directory here (must not exist) instead of deleting it")
	weights := flag.String("hybrid-weights", "", "comma-separated vector weights to evaluate hybrid with (default: the shipped one)")
	flag.Parse()
	for _, w := range strings.Split(*weights, ",") {
		if f, err := strconv.ParseFloat(strings.TrimSpace(w), 64); err == nil && f > 0 {
			hybridWeights = append(hybridWeights, f)
		}
	}
	if err := run(*goroot, *nq, *history, *nHistory, *skipPerf, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(goroot string, nq int, history string, nHistory int, skipPerf bool, keep string) error {
	ctx := context.Background()
	work := keep
	if keep == "" {
		var err error
		if work, err = os.MkdirTemp("", "cidx-search-bench-*"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	} else if err := os.Mkdir(keep, 0o755); err != nil {
		return err
	}
	a, err := app.Open(ctx, filepath.Join(work, "data"), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	defer a.Close()
	fmt.Printf("cidx search benchmark, %d cores, embedder %s\n\n", runtime.NumCPU(), a.Index.Embedder().ID())

	if !skipPerf {
		if err := perf(ctx, a, work, goroot); err != nil {
			return err
		}
	}

	// Retrieval quality on the doc-stripped tree.
	qs, srcBytes, err := stripCorpus(goroot, filepath.Join(work, "nodoc"), nq)
	if err != nil {
		return err
	}
	fmt.Printf("\n== Retrieval: %d queries from doc comments of %s (%d MB indexed, doc comments removed)\n", len(qs), goroot, srcBytes>>20)
	if err := gitCommitAll(filepath.Join(work, "nodoc")); err != nil {
		return err
	}
	if _, err := addRepo(ctx, a, "nodoc", filepath.Join(work, "nodoc")); err != nil {
		return err
	}
	evalQueries(ctx, a, "nodoc-global", qs)

	// The same functions asked for by name, as an agent looking for an
	// identifier would (names are not unique: New, String, Read...).
	var idents []query
	for _, q := range qs {
		q.text = q.ident
		idents = append(idents, q)
	}
	fmt.Printf("\n== Retrieval: the same %d functions queried by name (ReadFull, Reader.Read)\n", len(idents))
	evalQueries(ctx, a, "nodoc-global", idents)

	if history != "" {
		hq, err := commitQueries(history, nHistory)
		if err != nil {
			return err
		}
		fmt.Printf("\n== Retrieval: %d commit subjects of %s -> changed files\n", len(hq), history)
		if _, err := addRepo(ctx, a, "history", history); err != nil {
			return err
		}
		evalQueries(ctx, a, "history-global", hq)
	}
	return nil
}

func addRepo(ctx context.Context, a *app.App, alias, src string) (time.Duration, error) {
	start := time.Now()
	j, err := a.Repos.Add(ctx, "admin", alias, src, "")
	if err != nil {
		return 0, err
	}
	done, err := a.Jobs.RunNow(ctx, j.ID)
	if err != nil {
		return 0, err
	}
	if done.Status != jobs.Completed {
		return 0, fmt.Errorf("index %s: %s", alias, *done.Error)
	}
	return time.Since(start), nil
}

// perf indexes the real tree, changes one file and reindexes.
func perf(ctx context.Context, a *app.App, work, goroot string) error {
	repo := filepath.Join(work, "goroot")
	n, err := copyTree(goroot, repo, nil)
	if err != nil {
		return err
	}
	if err := gitCommitAll(repo); err != nil {
		return err
	}
	fmt.Printf("== Indexing %s (%d MB, as a git repository)\n", goroot, n>>20)
	took, err := addRepo(ctx, a, "goroot", repo)
	if err != nil {
		return err
	}
	st, _ := a.Index.Status(ctx, "goroot")
	m := st.Manifest
	fmt.Printf("full index (clone + snapshot + trigram + BM25 + vectors): %.1f s (lexical %.1f s, vectors %.1f s)\n", took.Seconds(), float64(m.LexicalMS)/1000, float64(m.VectorsMS)/1000)
	fmt.Printf("indexed: %d files, %d MB, %d chunks; skipped %v\n", m.Files, m.Bytes>>20, m.Chunks, m.Skipped)
	parts := ""
	if rd, err := a.Index.Open(ctx, "goroot"); err == nil {
		parts = breakdown(rd.Dir)
		rd.Release()
	}
	fmt.Printf("index on disk: %d MB = %.2fx the indexed source (%s)\n", m.DiskBytes>>20, float64(m.DiskBytes)/float64(max(1, m.Bytes)), parts)

	// Change one file and refresh.
	f := filepath.Join(repo, "net", "http", "server.go")
	b, err := os.ReadFile(f)
	if err != nil {
		return err
	}
	b = append(b, []byte("\n// benchmarkMarker is added by the benchmark.\nfunc benchmarkMarker() {}\n")...)
	os.WriteFile(f, b, 0o644)
	if err := git(repo, "commit", "-qam", "change one file"); err != nil {
		return err
	}
	start := time.Now()
	j, err := a.Repos.Refresh(ctx, "admin", "goroot")
	if err != nil {
		return err
	}
	if done, err := a.Jobs.RunNow(ctx, j.ID); err != nil || done.Status != jobs.Completed {
		return fmt.Errorf("refresh: %v %v", err, done.Error)
	}
	st, _ = a.Index.Status(ctx, "goroot")
	fmt.Printf("refresh after changing one file (fetch + snapshot + incremental index): %.2f s (index lexical %.2f s, vectors %.2f s, %d chunks embedded)\n",
		time.Since(start).Seconds(), float64(st.Manifest.LexicalMS)/1000, float64(st.Manifest.VectorsMS)/1000, st.Manifest.Embedded)

	// Latency on the real tree, with the index loaded.
	qs := []string{"read exactly len bytes into a buffer", "parse an HTTP request line", "compress data with deflate", "sort a slice of strings", "context deadline exceeded",
		"ReadFull", "ServeHTTP", "tls handshake timeout", "convert a string to an integer", "walk a directory tree"}
	for _, mode := range []string{"fts", "semantic", "hybrid"} {
		var lat []time.Duration
		for range 5 {
			for _, q := range qs {
				t := time.Now()
				if _, err := a.Search.Code(ctx, search.CodeQuery{Text: q, Aliases: []string{"goroot-global"}, Mode: mode, Limit: 10}); err != nil {
					return err
				}
				lat = append(lat, time.Since(t))
			}
		}
		slices.Sort(lat)
		fmt.Printf("search_code %-8s p50 %6.2f ms  p99 %6.2f ms  (%d queries, includes query embedding)\n", mode, ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100]), len(lat))
	}
	runtime.GC()
	fmt.Printf("process RSS with the index loaded: %d MB\n", rss()>>20)
	return nil
}

// breakdown lists the sizes of a build's parts.
func breakdown(dir string) string {
	var parts []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		var n int64
		filepath.WalkDir(filepath.Join(dir, e.Name()), func(_ string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if info, err := d.Info(); err == nil {
					n += info.Size()
				}
			}
			return nil
		})
		parts = append(parts, fmt.Sprintf("%s %.1f MB", e.Name(), float64(n)/(1<<20)))
	}
	return strings.Join(parts, ", ")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func rss() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// query is one evaluation query and what answers it.
type query struct {
	text  string
	ident string   // code queries: the function's name (Type.Method for methods)
	path  string   // code queries: the file
	from  int      // and the function's lines
	to    int      //
	files []string // commit queries: the changed files
}

func (q query) hit(h search.CodeHit) bool {
	if q.files != nil {
		return slices.Contains(q.files, h.FilePath)
	}
	return h.FilePath == q.path && h.StartLine <= q.to && h.EndLine >= q.from
}

// hybridWeights are the vector weights hybrid is evaluated with (empty:
// the shipped default).
var hybridWeights []float64

func evalQueries(ctx context.Context, a *app.App, alias string, qs []query) {
	fmt.Printf("%-12s %8s %10s %9s %9s\n", "mode", "MRR@10", "Recall@10", "p50 ms", "p99 ms")
	type run struct {
		label, mode string
		weight      float64
	}
	runs := []run{{"fts", "fts", 0}, {"semantic", "semantic", 0}}
	if len(hybridWeights) == 0 {
		runs = append(runs, run{"hybrid", "hybrid", 0})
	}
	for _, w := range hybridWeights {
		runs = append(runs, run{fmt.Sprintf("hybrid w=%g", w), "hybrid", w})
	}
	for _, r := range runs {
		var mrr, recall float64
		var lat []time.Duration
		for _, q := range qs {
			t := time.Now()
			res, err := a.Search.Code(ctx, search.CodeQuery{Text: q.text, Aliases: []string{alias}, Mode: r.mode, Limit: 10, VectorWeight: r.weight})
			lat = append(lat, time.Since(t))
			if err != nil {
				continue
			}
			found := map[string]bool{}
			first := 0
			for i, h := range res.Hits {
				if q.hit(h) {
					if first == 0 {
						first = i + 1
					}
					found[h.FilePath] = true
				}
			}
			if first > 0 {
				mrr += 1 / float64(first)
			}
			if q.files != nil {
				recall += float64(len(found)) / float64(len(q.files))
			} else if first > 0 {
				recall++
			}
		}
		slices.Sort(lat)
		n := float64(len(qs))
		fmt.Printf("%-12s %8.3f %10.3f %9.2f %9.2f\n", r.label, mrr/n, recall/n, ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100]))
	}
}

// stripCorpus copies the .go files of goroot into dst with every function
// doc comment removed, and returns queries for a deterministic sample of
// documented functions: the first sentence of the doc comment, without
// the leading function name.
func stripCorpus(goroot, dst string, n int) ([]query, int64, error) {
	var all []query
	total, err := copyTree(goroot, dst, func(rel string, src []byte) []byte {
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return src
		}
		out, qs := stripDocs(rel, src)
		all = append(all, qs...)
		return out
	})
	if err != nil {
		return nil, 0, err
	}
	sort.Slice(all, func(i, j int) bool { return all[i].path+all[i].text < all[j].path+all[j].text })
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:min(n, len(all))], total, nil
}

func stripDocs(rel string, src []byte) ([]byte, []query) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.ParseComments)
	if err != nil || strings.Contains(rel, "testdata/") || strings.HasPrefix(rel, "cmd/vendor/") || strings.HasPrefix(rel, "vendor/") {
		return src, nil
	}
	type cut struct{ from, to int }
	var cuts []cut
	var qs []query
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Doc == nil || fd.Body == nil {
			continue
		}
		text := firstSentence(fd.Doc.Text(), fd.Name.Name)
		from, to := fset.Position(fd.Doc.Pos()).Offset, fset.Position(fd.Doc.End()).Offset
		cuts = append(cuts, cut{from, to})
		if len(strings.Fields(text)) < 4 || !ast.IsExported(fd.Name.Name) {
			continue
		}
		// Lines after removing the comment: count removed newlines before.
		ident := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			t := fd.Recv.List[0].Type
			if st, ok := t.(*ast.StarExpr); ok {
				t = st.X
			}
			if id, ok := t.(*ast.Ident); ok {
				ident = id.Name + "." + ident
			}
		}
		qs = append(qs, query{text: text, ident: ident, path: rel, from: fset.Position(fd.Pos()).Line, to: fset.Position(fd.End()).Line})
	}
	if len(cuts) == 0 {
		return src, nil
	}
	// Replace each doc comment by as many empty lines, so line numbers hold.
	out := make([]byte, 0, len(src))
	last := 0
	for _, c := range cuts {
		out = append(out, src[last:c.from]...)
		out = append(out, bytes.Repeat([]byte("\n"), bytes.Count(src[c.from:c.to], []byte("\n")))...)
		last = c.to
	}
	out = append(out, src[last:]...)
	return out, qs
}

// firstSentence is the doc comment's first sentence without the leading
// function name ("ReadFull reads exactly..." -> "reads exactly...").
func firstSentence(doc, name string) string {
	doc = strings.Join(strings.Fields(doc), " ")
	if i := strings.Index(doc, ". "); i >= 0 {
		doc = doc[:i]
	}
	doc = strings.TrimSuffix(doc, ".")
	words := strings.Fields(doc)
	if len(words) > 0 && (words[0] == name || strings.TrimSuffix(words[0], "'s") == name) {
		words = words[1:]
	}
	if len(words) > 0 && (words[0] == "returns" || words[0] == "is") && len(words) > 1 {
		// keep: the verb carries meaning
	}
	return strings.Join(words, " ")
}

// commitQueries returns subjects of non-merge commits that changed 1-5
// source files still present at HEAD.
func commitQueries(repo string, n int) ([]query, error) {
	out, err := exec.Command("git", "-C", repo, "log", "--no-merges", "--format=%x00%s", "--name-only", "-n", "5000", "HEAD").Output()
	if err != nil {
		return nil, fmt.Errorf("git log %s: %w", repo, err)
	}
	head, err := exec.Command("git", "-C", repo, "ls-tree", "-r", "--name-only", "HEAD").Output()
	if err != nil {
		return nil, err
	}
	exists := map[string]bool{}
	for _, p := range strings.Split(string(head), "\n") {
		exists[p] = true
	}
	var qs []query
	for _, rec := range strings.Split(string(out), "\x00")[1:] {
		lines := strings.Split(strings.TrimSpace(rec), "\n")
		subject := lines[0]
		var changed []string
		for _, p := range lines[1:] {
			p = strings.TrimSpace(p)
			if p != "" && exists[p] && isSource(p) {
				changed = append(changed, p)
			}
		}
		if len(changed) == 0 || len(changed) > 5 || len(strings.Fields(subject)) < 3 {
			continue
		}
		qs = append(qs, query{text: subject, files: changed})
		if len(qs) == n {
			break
		}
	}
	return qs, nil
}

func isSource(p string) bool {
	switch filepath.Ext(p) {
	case ".go", ".py", ".js", ".ts", ".java", ".rs", ".c", ".h", ".cc", ".cpp", ".rb":
		return !strings.Contains(p, "testdata/")
	}
	return false
}

// copyTree copies the regular files of src into dst (transforming them with
// f when given) and returns the bytes written.
func copyTree(src, dst string, f func(rel string, b []byte) []byte) (int64, error) {
	var total int64
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if f != nil {
			b = f(filepath.ToSlash(rel), b)
		}
		total += int64(len(b))
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	return total, err
}

func git(dir string, args ...string) error {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.com", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %v: %v: %s", args, err, out)
	}
	return nil
}

func gitCommitAll(dir string) error {
	if err := git(dir, "init", "-q", "-b", "main"); err != nil {
		return err
	}
	if err := git(dir, "add", "-A"); err != nil {
		return err
	}
	return git(dir, "commit", "-qm", "import")
}
