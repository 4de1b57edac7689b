package evalset

import (
	"path/filepath"
	"runtime"
	"testing"
)

func TestMRR(t *testing.T) {
	// Perfect ranking, then the right answer always second.
	if got := MRR(3, 10, func(i, j int) float64 {
		if i == j {
			return 1
		}
		return 0
	}); got != 1 {
		t.Fatalf("perfect MRR = %v", got)
	}
	if got := MRR(3, 10, func(i, j int) float64 {
		if i == j {
			return 1
		}
		if j == (i+1)%3 {
			return 2
		}
		return 0
	}); got != 0.5 {
		t.Fatalf("MRR = %v", got)
	}
}

func TestBM25(t *testing.T) {
	b := NewBM25([]string{"func ReadFile(name string)", "func WriteFile(name string, data []byte)", "func Close() error"})
	s := b.Query("reads a file")
	if !(s[0] > s[1] && s[1] > 0 && s[2] == 0) {
		t.Fatalf("scores %v", s)
	}
}

func TestGoFuncsBM25(t *testing.T) {
	root := filepath.Join(runtime.GOROOT(), "src")
	pairs, err := GoFuncs(root, 500)
	if err != nil {
		t.Skip("no GOROOT source:", err)
	}
	if len(pairs) != 500 {
		t.Fatalf("%d pairs", len(pairs))
	}
	docs := make([]string, len(pairs))
	for i, p := range pairs {
		docs[i] = p.Doc
	}
	bm := NewBM25(docs)
	scores := make([][]float64, len(pairs))
	stripped := make([][]float64, len(pairs))
	for i, p := range pairs {
		scores[i] = bm.Query(p.Query)
		stripped[i] = bm.Query(StripName(p))
	}
	mrr := MRR(len(pairs), 10, func(i, j int) float64 { return scores[i][j] })
	mrr2 := MRR(len(pairs), 10, func(i, j int) float64 { return stripped[i][j] })
	t.Logf("BM25 MRR@10 over %d GOROOT functions: %.4f (queries without the leading name: %.4f)", len(pairs), mrr, mrr2)
	for _, p := range pairs[:5] {
		t.Logf("%s %s: %q", p.Path, p.Name, p.Query)
	}
}
