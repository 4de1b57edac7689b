// Package evalset builds the code-search evaluation used to check the
// builtin embedder: documented functions of the Go standard library, where
// the query is the first sentence of a function's doc comment and the
// document is the function's source without that comment. It also holds
// the yardsticks: a small in-memory BM25 over codetok terms and MRR@k.
//
// The Go standard library is the test set: the trainer
// (cmd/cidx-train-embed) never trains on it.
package evalset

import (
	"errors"
	"hash/fnv"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cidx/cidx/internal/codetok"
	"github.com/cidx/cidx/internal/embed/codeunit"
)

// Pair is one evaluation item.
type Pair struct {
	Path  string // file, relative to the root
	Name  string // function name
	Query string // first sentence of the doc comment
	Doc   string // function source without its doc comment
}

// GoFuncs returns a deterministic sample of at most n documented functions
// and methods under root (normally $(go env GOROOT)/src). It skips test
// files, testdata and vendor directories, generated files, deprecated
// functions, one-line functions, queries of fewer than three words and
// repeated queries or bodies (the same doc on every platform's copy of a
// function). The sample is the n items with the smallest FNV hash of
// path and name, listed in path order, so it is stable across runs and
// nearly stable across Go versions.
func GoFuncs(root string, n int) ([]Pair, error) {
	if _, err := os.Stat(root); err != nil {
		return nil, err
	}
	type cand struct {
		Pair
		h uint64
	}
	var all []cand
	seenQ := map[string]bool{}
	seenD := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		units, err := codeunit.Go(p, src)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		for _, u := range units {
			if (u.Kind != "func" && u.Kind != "method") || u.Doc == "" {
				continue
			}
			if strings.HasPrefix(u.Doc, "Deprecated") || strings.Count(u.Code, "\n") < 2 {
				continue
			}
			q := codeunit.FirstSentence(u.Doc)
			if len(strings.Fields(q)) < 3 {
				continue
			}
			if seenQ[q] || seenD[u.Code] {
				continue
			}
			seenQ[q], seenD[u.Code] = true, true
			h := fnv.New64a()
			h.Write([]byte(rel + "\x00" + u.Name))
			all = append(all, cand{Pair{Path: rel, Name: u.Name, Query: q, Doc: u.Code}, h.Sum64()})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, errors.New("evalset: no documented functions under " + root)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].h < all[j].h })
	if len(all) > n {
		all = all[:n]
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].Path != all[j].Path {
			return all[i].Path < all[j].Path
		}
		return all[i].Name < all[j].Name
	})
	out := make([]Pair, len(all))
	for i, c := range all {
		out[i] = c.Pair
	}
	return out, nil
}

// StripName removes a leading function name from a Go doc sentence
// ("ReadFile reads the file." -> "reads the file."): a harder variant of the
// queries with no identifier to match exactly.
func StripName(p Pair) string {
	q := p.Query
	for _, prefix := range []string{p.Name + " ", "A " + p.Name + " ", "An " + p.Name + " ", "The " + p.Name + " "} {
		if strings.HasPrefix(q, prefix) {
			return q[len(prefix):]
		}
	}
	return q
}

// MRR returns the mean reciprocal rank at k: score(i, j) is the similarity
// of query i to document j, and document i is the right answer to query i.
// Ties are broken against the right answer.
func MRR(n, k int, score func(i, j int) float64) float64 {
	total := 0.0
	row := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			row[j] = score(i, j)
		}
		rank := 1
		for j := 0; j < n; j++ {
			if j != i && row[j] >= row[i] {
				rank++
			}
		}
		if rank <= k {
			total += 1 / float64(rank)
		}
	}
	return total / float64(n)
}

// BM25 is a tiny in-memory BM25 (k1 = 1.2, b = 0.75) over codetok terms.
type BM25 struct {
	docs  []map[string]int
	lens  []float64
	avg   float64
	df    map[string]int
	K1, B float64
}

// NewBM25 indexes docs.
func NewBM25(docs []string) *BM25 {
	b := &BM25{df: map[string]int{}, K1: 1.2, B: 0.75}
	total := 0.0
	for _, d := range docs {
		tf := map[string]int{}
		terms := codetok.Terms(d)
		for _, t := range terms {
			tf[t]++
		}
		for t := range tf {
			b.df[t]++
		}
		b.docs = append(b.docs, tf)
		b.lens = append(b.lens, float64(len(terms)))
		total += float64(len(terms))
	}
	b.avg = total / math.Max(1, float64(len(docs)))
	return b
}

// Query returns the BM25 score of every document for query, using each
// distinct query term once.
func (b *BM25) Query(query string) []float64 {
	scores := make([]float64, len(b.docs))
	n := float64(len(b.docs))
	seen := map[string]bool{}
	for _, t := range codetok.Terms(query) {
		if seen[t] {
			continue
		}
		seen[t] = true
		df := float64(b.df[t])
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for j, d := range b.docs {
			f := float64(d[t])
			if f == 0 {
				continue
			}
			scores[j] += idf * f * (b.K1 + 1) / (f + b.K1*(1-b.B+b.B*b.lens[j]/b.avg))
		}
	}
	return scores
}
