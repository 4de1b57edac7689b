package bm25

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// corpus makes n deterministic documents over a Zipf-like vocabulary.
func corpus(n int, seed uint64) []Doc {
	r := rand.New(rand.NewPCG(seed, 1))
	z := rand.NewZipf(r, 1.1, 2, 2000)
	word := func() string { return fmt.Sprintf("w%d", z.Uint64()) }
	docs := make([]Doc, n)
	for i := range docs {
		d := Doc{ID: uint32(i + 1)}
		for range 5 + r.IntN(60) {
			d.Body = append(d.Body, word())
		}
		d.Path = []string{"dir", fmt.Sprintf("w%d", r.IntN(50))}
		if r.IntN(2) == 0 {
			d.Symbol = []string{word()}
		}
		docs[i] = d
	}
	return docs
}

// reference scores docs for terms the slow, obvious way (BM25F as FTS5).
func reference(docs []Doc, terms []string, k int, keep func(uint32) bool) []Hit {
	var total float64
	for _, d := range docs {
		total += float64(max(1, len(d.Body)+len(d.Path)+len(d.Symbol)))
	}
	avg := total / float64(len(docs))
	uniq := map[string]bool{}
	var hits []Hit
	for _, t := range terms {
		uniq[t] = true
	}
	df := map[string]int{}
	for _, d := range docs {
		for t := range uniq {
			if slices.Contains(d.Body, t) || slices.Contains(d.Path, t) || slices.Contains(d.Symbol, t) {
				df[t]++
			}
		}
	}
	for _, d := range docs {
		if keep != nil && !keep(d.ID) {
			continue
		}
		s, any := 0.0, false
		dl := float64(max(1, len(d.Body)+len(d.Path)+len(d.Symbol)))
		for t := range uniq {
			n := 0
			for _, x := range d.Body {
				if x == t {
					n++
				}
			}
			f := float64(min(n, 63))
			if slices.Contains(d.Path, t) {
				f += Weights.Path
			}
			if slices.Contains(d.Symbol, t) {
				f += Weights.Symbol
			}
			if f == 0 {
				continue
			}
			any = true
			idf := math.Log((float64(len(docs)) - float64(df[t]) + 0.5) / (float64(df[t]) + 0.5))
			if idf <= 0 {
				idf = 1e-6
			}
			s += idf * f * (k1 + 1) / (f + k1*(1-b+b*dl/avg))
		}
		if any {
			hits = append(hits, Hit{d.ID, s})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Doc < hits[j].Doc
	})
	return hits[:min(k, len(hits))]
}

func build(t testing.TB, docs []Doc) (*Index, string) {
	t.Helper()
	bl := NewBuilder()
	for _, d := range docs {
		bl.Add(d)
	}
	p := filepath.Join(t.TempDir(), "bm25.bin")
	if err := bl.Write(p); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix, p
}

// sameRanking compares rankings allowing float32 accumulation error: the
// documents must match, except where two scores are within rounding.
func sameRanking(t *testing.T, what string, got, want []Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i].Score-want[i].Score) > 1e-4*math.Max(1, want[i].Score) {
			t.Fatalf("%s: hit %d scores %.6f, want %.6f (doc %d vs %d)", what, i, got[i].Score, want[i].Score, got[i].Doc, want[i].Doc)
		}
		if got[i].Doc != want[i].Doc && math.Abs(want[i].Score-want[min(i+1, len(want)-1)].Score) > 1e-4 && (i == 0 || math.Abs(want[i].Score-want[i-1].Score) > 1e-4) {
			t.Fatalf("%s: hit %d is doc %d, want %d", what, i, got[i].Doc, want[i].Doc)
		}
	}
}

func TestSearchMatchesReferenceBM25(t *testing.T) {
	docs := corpus(3000, 7)
	ix, _ := build(t, docs)
	if ix.Docs() != len(docs) {
		t.Fatalf("Docs = %d", ix.Docs())
	}
	queries := [][]string{{"w3"}, {"w1", "w2", "w40"}, {"w500", "w7", "w7"}, {"dir"}, {"w1999", "nosuch"}, {"w12", "w13", "w14", "w15", "w16", "w17", "w18", "w19"}}
	for _, q := range queries {
		for _, k := range []int{1, 10, 100} {
			sameRanking(t, strings.Join(q, " "), ix.Search(q, k, nil), reference(docs, q, k, nil))
		}
		odd := func(d uint32) bool { return d%2 == 1 }
		sameRanking(t, "odd "+strings.Join(q, " "), ix.Search(q, 10, odd), reference(docs, q, 10, odd))
	}
	if got := ix.Search([]string{"nosuch"}, 10, nil); len(got) != 0 {
		t.Fatalf("unknown term found %v", got)
	}
	// A symbol hit outranks the same count in the body only.
	if w := Weights; !(w.Symbol > w.Body && w.Body > w.Path) {
		t.Fatalf("weights %+v", w)
	}
}

func TestDocFreqAndTerms(t *testing.T) {
	docs := []Doc{
		{ID: 1, Body: []string{"read", "file", "read"}, Path: []string{"io"}},
		{ID: 2, Body: []string{"write", "file"}, Symbol: []string{"write"}},
		{ID: 5, Path: []string{"io"}, Symbol: []string{"close"}},
	}
	ix, _ := build(t, docs)
	for term, want := range map[string]int{"read": 1, "file": 2, "io": 2, "write": 1, "close": 1, "nope": 0} {
		if got := ix.DocFreq(term); got != want {
			t.Errorf("DocFreq(%s) = %d, want %d", term, got, want)
		}
	}
	if ix.Docs() != 3 || ix.MaxDoc() != 6 {
		t.Errorf("Docs %d MaxDoc %d, want 3 and 6 (ids 1, 2, 5)", ix.Docs(), ix.MaxDoc())
	}
	var terms []string
	ix.EachTerm(func(s string) bool { terms = append(terms, s); return true })
	if strings.Join(terms, ",") != "close,file,io,read,write" {
		t.Fatalf("terms %v", terms)
	}
	// The symbol field weighs more than the body: "write" ranks doc 2 first
	// even though doc 1 holds "read" twice for "read write".
	hits := ix.Search([]string{"write", "read"}, 3, nil)
	if len(hits) != 2 || hits[0].Doc != 2 {
		t.Fatalf("hits %v", hits)
	}
}

// An incremental merge gives the same index as building the final set of
// documents from scratch: byte for byte when the highest id survives.
func TestMergeEqualsRebuild(t *testing.T) {
	docs := corpus(2000, 11)
	old, _ := build(t, docs)
	removed := map[uint32]bool{}
	var final []Doc
	for _, d := range docs {
		if d.ID%7 == 3 && d.ID != uint32(len(docs)) {
			removed[d.ID] = true
			continue
		}
		final = append(final, d)
	}
	// Re-added documents reuse some removed ids (SQLite may reuse a rowid)
	// and take new ones.
	extra := corpus(300, 12)
	bl := NewBuilder()
	for i, d := range extra {
		if i < 50 {
			d.ID = uint32(3 + 7*i)
		} else {
			d.ID = uint32(len(docs) + i)
		}
		bl.Add(d)
		final = append(final, d)
	}
	p := filepath.Join(t.TempDir(), "merged.bin")
	if err := Merge(p, old, func(d uint32) bool { return removed[d] }, bl); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(final, func(a, b Doc) int { return int(a.ID) - int(b.ID) })
	_, fresh := build(t, final)
	a, _ := os.ReadFile(p)
	b, _ := os.ReadFile(fresh)
	if !bytes.Equal(a, b) {
		t.Fatalf("merged index (%d bytes) differs from a fresh build (%d bytes)", len(a), len(b))
	}
}

func TestOpenRejectsOtherFiles(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x")
	os.WriteFile(p, bytes.Repeat([]byte("x"), 200), 0o644)
	if _, err := Open(p); err == nil {
		t.Fatal("opened a file that is not an index")
	}
	empty, _ := build(t, nil)
	if empty.Docs() != 0 || len(empty.Search([]string{"a"}, 5, nil)) != 0 {
		t.Fatal("empty index answers")
	}
}

func BenchmarkSearch(b *testing.B) {
	ix, _ := build(b, corpus(100000, 3))
	q := []string{"w2", "w5", "w30", "w200", "w1000", "w7", "w11", "w90"}
	b.ResetTimer()
	for range b.N {
		ix.Search(q, 10, nil)
	}
}
