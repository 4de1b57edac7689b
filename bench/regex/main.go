// Command regex benchmarks the trigram index (internal/trigram) against
// ripgrep on the same files: it reads a corpus the way the indexer does
// (no testdata directories, no files over 1 MiB, no binaries), builds the
// index, then for a fixed set of patterns times Search (median of warm runs)
// and `rg --no-config -uuu -a -n --column` over a copy of exactly those files
// (best of warm runs), checks that both find the same (path, line, column)
// set and prints a table with the median speedup and the worst ratio. It
// also measures an incremental Update after changing one file.
//
//	go run ./bench/regex [-corpus DIR] [-runs 7] [-shards 16]
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cidx/cidx/internal/trigram"
)

// patterns is the fixed benchmark set: selective literals and regexes of
// the kind agents send.
var patterns = []struct {
	pattern string
	literal bool
}{
	{"ReadFull", true},
	{"ErrUnexpectedEOF", true},
	{"context deadline exceeded", true},
	{"sync.Mutex", true},
	{"MaxInt64", true},
	{"StatusNotFound", true},
	{`func \w+Marshal\(`, false},
	{`errors\.New\("[^"]*timeout`, false},
	{`\bsync\.Pool\b`, false},
	{`(?i)tls handshake`, false},
	{`TODO\(\w+\)`, false},
	{`func \(\w+ \*?Reader\) Read\w*\(`, false},
	{`runtime\.(Gosched|GC)\(\)`, false},
	{`(?i)deprecated:`, false},
	{`^import "unsafe"$`, false},
	{`\bpanic\("[^"]+"\)`, false},
	{`(?i)utf-?16`, false},
	{`atomic\.(Add|Load|Store)Int64\(`, false},
	{`\bunicode\.Is\w+\(`, false},
	{`os\.Getenv\("GO\w+"\)`, false},
}

func main() {
	corpus := flag.String("corpus", filepath.Join(runtime.GOROOT(), "src"), "directory to index")
	runs := flag.Int("runs", 7, "timed runs per pattern and engine")
	shards := flag.Int("shards", trigram.DefaultShards, "index shards")
	flag.Parse()
	if err := run(*corpus, *runs, *shards); err != nil {
		fmt.Fprintln(os.Stderr, "regex bench:", err)
		os.Exit(1)
	}
}

type key struct {
	path      string
	line, col int
}

func run(corpus string, runs, shards int) error {
	ctx := context.Background()
	rgPath, err := exec.LookPath("rg")
	if err != nil {
		return fmt.Errorf("ripgrep (rg) is required: %v", err)
	}
	work, err := os.MkdirTemp("", "cidx-regex-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	t0 := time.Now()
	docs, corpusBytes, err := readCorpus(corpus)
	if err != nil {
		return err
	}
	fmt.Printf("corpus %s: %d files, %.1f MB (read in %v)\n", corpus, len(docs), mb(corpusBytes), time.Since(t0).Round(time.Millisecond))

	// ripgrep searches a copy holding exactly the indexed files.
	tree := filepath.Join(work, "tree")
	for _, d := range docs {
		p := filepath.Join(tree, filepath.FromSlash(d.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, d.Content, 0o644); err != nil {
			return err
		}
	}

	resetPeakRSS()
	idx := filepath.Join(work, "idx")
	t0 = time.Now()
	if err := trigram.Build(ctx, idx, docs, trigram.BuildOptions{Shards: shards}); err != nil {
		return err
	}
	buildTime := time.Since(t0)
	idxBytes := dirSize(idx)
	fmt.Printf("build: %v (%.1f MB/s), %d shards, index %.1f MB = %.2fx corpus, peak RSS %.0f MB (the corpus itself is in memory)\n",
		buildTime.Round(time.Millisecond), mb(corpusBytes)/buildTime.Seconds(), shards, mb(idxBytes),
		float64(idxBytes)/float64(corpusBytes), mb(procStatus("VmHWM")))

	if err := benchUpdate(ctx, docs, idx, filepath.Join(work, "idx2"), shards); err != nil {
		return err
	}

	// Drop the corpus before opening the index: from here on the heap
	// should hold only zoekt's per-shard metadata.
	docs = nil
	runtime.GC()
	debug.FreeOSMemory()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rssBefore := procStatus("VmRSS")
	t0 = time.Now()
	ix, err := trigram.Open(idx)
	if err != nil {
		return err
	}
	defer ix.Close()
	openTime := time.Since(t0)
	runtime.GC()
	runtime.ReadMemStats(&after)
	fmt.Printf("open: %v, Go heap +%.1f MB (in use %.1f MB), RSS +%.1f MB (mmap pages not yet touched are not resident)\n",
		openTime.Round(time.Millisecond), mb(int64(after.HeapAlloc)-int64(before.HeapAlloc)), mb(int64(after.HeapAlloc)),
		mb(procStatus("VmRSS")-rssBefore))

	// Warm the page cache for both engines.
	exec.Command(rgPath, "--no-config", "-uuu", "-a", "-c", "zzzzqqqq", tree).Run()

	fmt.Printf("\ntarget set: Search returning every match (MaxResults unlimited) vs rg printing every match\n")
	speedups, allSame, err := table(ctx, ix, rgPath, tree, patterns, runs, 1<<30)
	if err != nil {
		return err
	}
	sorted := slices.Clone(speedups)
	slices.Sort(sorted)
	median := sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		median = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	fmt.Printf("\nmedian speedup %.1fx, worst %.2fx (ours/rg time ratio %.2f); all match sets equal: %v\n", median, sorted[0], 1/sorted[0], allSame)

	fmt.Printf("\nbroad patterns (not in the target set; no literal, so every file is scanned by the DFA):\n" +
		"Search as the tool calls it (100 matches returned, every match counted) vs rg printing every match\n")
	_, broadSame, err := table(ctx, ix, rgPath, tree, broad, runs, 100)
	if err != nil {
		return err
	}
	if !allSame || !broadSame {
		return fmt.Errorf("match sets differ from ripgrep")
	}
	return nil
}

// broad are patterns without a literal the index can use.
var broad = []struct {
	pattern string
	literal bool
}{
	{`[A-Z]{5,}`, false},
	{`\d{4,}`, false},
	{`x`, false},
	{`\w+`, false},
}

// table times each pattern with both engines and prints one row per
// pattern; maxResults is what Search is asked to return.
func table(ctx context.Context, ix *trigram.Index, rgPath, tree string, pats []struct {
	pattern string
	literal bool
}, runs, maxResults int) (speedups []float64, allSame bool, err error) {
	fmt.Printf("%-40s %9s %9s %8s %8s %7s %s\n", "pattern", "ours ms", "rg ms", "speedup", "matches", "files", "same")
	allSame = true
	for _, p := range pats {
		q := trigram.Query{Pattern: p.pattern, Literal: p.literal, CaseSensitive: true, MaxResults: 1 << 30, CountLimit: 1 << 30}
		res, err := ix.Search(ctx, q) // warm-up, and the result to compare
		if err != nil {
			return nil, false, fmt.Errorf("%s: %v", p.pattern, err)
		}
		q.MaxResults = maxResults
		var ours []time.Duration
		for i := 0; i < runs; i++ {
			t := time.Now()
			if _, err := ix.Search(ctx, q); err != nil {
				return nil, false, err
			}
			ours = append(ours, time.Since(t))
		}
		slices.Sort(ours)
		oursMed := ours[len(ours)/2]

		args := []string{"--no-config", "-uuu", "-a", "-n", "--column", "--no-heading", "--null", "--color=never"}
		if p.literal {
			args = append(args, "-F")
		}
		args = append(args, "-e", p.pattern, "--", ".")
		var rgOut []byte
		var rgBest time.Duration
		for i := 0; i <= runs; i++ {
			cmd := exec.Command(rgPath, args...)
			cmd.Dir = tree
			t := time.Now()
			out, err := cmd.Output()
			d := time.Since(t)
			if err != nil {
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
					return nil, false, fmt.Errorf("rg %s: %v", p.pattern, err)
				}
			}
			if i == 0 {
				rgOut = out // the first run only warms up
				continue
			}
			if rgBest == 0 || d < rgBest {
				rgBest = d
			}
		}
		want, err := parseRg(rgOut)
		if err != nil {
			return nil, false, err
		}
		got := make([]key, len(res.Matches))
		for i, m := range res.Matches {
			got[i] = key{m.Path, m.Line, m.Column}
		}
		same := slices.Equal(got, want)
		allSame = allSame && same
		speedup := float64(rgBest) / float64(oursMed)
		speedups = append(speedups, speedup)
		fmt.Printf("%-40s %9.2f %9.2f %7.1fx %8d %7d %v\n", label(p.pattern, p.literal), ms(oursMed), ms(rgBest), speedup, res.TotalMatches, res.FilesSearched, same)
		if !same {
			fmt.Printf("    ours %d matches, rg %d\n", len(got), len(want))
		}
	}
	return speedups, allSame, nil
}

// benchUpdate changes one file and times Update.
func benchUpdate(ctx context.Context, docs []trigram.Doc, oldDir, newDir string, shards int) error {
	i := slices.IndexFunc(docs, func(d trigram.Doc) bool { return d.Path == "net/http/server.go" })
	if i < 0 {
		i = len(docs) / 2
	}
	changed := docs[i].Path
	marker := "cidxUpdateBenchMarker"
	next := slices.Clone(docs)
	next[i].Content = append(slices.Clone(docs[i].Content), []byte("\n// "+marker+"\n")...)
	byShard := map[int][]trigram.Doc{}
	for _, d := range next {
		s := trigram.ShardOf(d.Path, shards)
		byShard[s] = append(byShard[s], d)
	}
	t0 := time.Now()
	err := trigram.Update(ctx, oldDir, newDir, trigram.Changes{
		Paths: []string{changed},
		Shard: func(s int) ([]trigram.Doc, error) { return byShard[s], nil },
		Docs:  func([]string) ([]trigram.Doc, error) { return []trigram.Doc{next[i]}, nil },
	}, trigram.BuildOptions{})
	if err != nil {
		return err
	}
	d := time.Since(t0)
	var shardBytes int64
	for _, doc := range byShard[trigram.ShardOf(changed, shards)] {
		shardBytes += int64(len(doc.Content))
	}
	ix, err := trigram.Open(newDir)
	if err != nil {
		return err
	}
	defer ix.Close()
	res, err := ix.Search(ctx, trigram.Query{Pattern: marker, Literal: true, CaseSensitive: true})
	if err != nil {
		return err
	}
	if res.TotalMatches != 1 || res.Matches[0].Path != changed {
		return fmt.Errorf("update: marker not found after Update: %+v", res)
	}
	fmt.Printf("update (one changed file, %s): %v: a delta shard of %.1f KB; the %d hash shards (%.1f MB of content in the file's) hard-linked\n",
		changed, d.Round(time.Millisecond), float64(len(next[i].Content))/1024, shards, mb(shardBytes))
	return nil
}

func readCorpus(root string) ([]trigram.Doc, int64, error) {
	var docs []trigram.Doc
	var total int64
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if p != root && (e.Name() == "testdata" || e.Name() == ".git") {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() {
			return nil
		}
		info, err := e.Info()
		if err != nil || info.Size() > 1<<20 {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		// Binary: a NUL byte in the first 8000 bytes (git's heuristic).
		if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		lang := ""
		if strings.HasSuffix(p, ".go") {
			lang = "Go" // what the indexer passes; others are guessed by zoekt
		}
		docs = append(docs, trigram.Doc{Path: filepath.ToSlash(rel), Content: b, Language: lang})
		total += int64(len(b))
		return nil
	})
	return docs, total, err
}

func parseRg(out []byte) ([]key, error) {
	var ks []key
	for _, line := range bytes.Split(out, []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		nul := bytes.IndexByte(line, 0)
		if nul < 0 {
			return nil, fmt.Errorf("unexpected rg output %q", line)
		}
		parts := strings.SplitN(string(line[nul+1:]), ":", 3)
		ln, err := strconv.Atoi(parts[0])
		if err != nil || len(parts) < 2 {
			return nil, fmt.Errorf("unexpected rg output %q", line)
		}
		col, err := strconv.Atoi(parts[1])
		if err != nil || len(parts) < 3 {
			col = 1 // rg prints no column when it cannot re-find the match (\A)
		}
		ks = append(ks, key{strings.TrimPrefix(string(line[:nul]), "./"), ln, col})
	}
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].path != ks[j].path {
			return ks[i].path < ks[j].path
		}
		return ks[i].line < ks[j].line
	})
	return ks, nil
}

func label(p string, literal bool) string {
	if literal {
		return strconv.Quote(p) + " (literal)"
	}
	return p
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if info, err := e.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// procStatus returns a memory field of /proc/self/status in bytes.
func procStatus(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// resetPeakRSS resets VmHWM (Linux: writing 5 to clear_refs).
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func mb(n int64) float64         { return float64(n) / (1 << 20) }
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
