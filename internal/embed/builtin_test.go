package embed

import (
	"context"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cidx/cidx/internal/embed/evalset"
)

func dot(a, b []float32) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestBuiltinBasics(t *testing.T) {
	b, err := NewBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^builtin:code-v1-[0-9a-f]{8}:256$`).MatchString(b.ID()) || b.Dim() != 256 {
		t.Fatalf("ID %q Dim %d", b.ID(), b.Dim())
	}
	e, err := New(Config{})
	if err != nil || e.ID() != b.ID() {
		t.Fatalf("default provider: %v %v", e, err)
	}
	docs := []string{
		"func ReadFile(name string) ([]byte, error) {\n\tf, err := os.Open(name)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\tdefer f.Close()\n\treturn io.ReadAll(f)\n}",
		"func (s *Server) ListenAndServe() error {\n\tln, err := net.Listen(\"tcp\", s.Addr)\n\tif err != nil {\n\t\treturn err\n\t}\n\treturn s.Serve(ln)\n}",
		"def parse_date(text):\n    \"\"\"Parse an ISO 8601 date.\"\"\"\n    return datetime.strptime(text, '%Y-%m-%d')",
		"",
		"!!! ... ???",
	}
	ctx := context.Background()
	dv, err := b.Embed(ctx, docs, Document)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range dv[:3] {
		if n := dot(v, v); math.Abs(n-1) > 1e-4 {
			t.Fatalf("doc %d: |v|^2 = %v", i, n)
		}
	}
	for _, v := range dv[3:] {
		if dot(v, v) != 0 {
			t.Fatal("text without terms must embed to the zero vector")
		}
	}
	again, _ := b.Embed(ctx, docs, Document)
	for i := range dv {
		for j := range dv[i] {
			if dv[i][j] != again[i][j] {
				t.Fatal("not deterministic")
			}
		}
	}
	for q, want := range map[string]int{
		"read the contents of a file":     0,
		"start an http server on a port":  1,
		"convert a string to a date/time": 2,
	} {
		qv, err := b.Embed(ctx, []string{q}, Query)
		if err != nil {
			t.Fatal(err)
		}
		best, bestJ := -2.0, -1
		for j, d := range dv[:3] {
			if s := dot(qv[0], d); s > best {
				best, bestJ = s, j
			}
		}
		if bestJ != want {
			t.Errorf("query %q: best doc %d, want %d", q, bestJ, want)
		}
	}
	// Query and document pooling differ.
	q, _ := b.Embed(ctx, docs[:1], Query)
	if dot(q[0], dv[0]) > 0.99999 {
		t.Error("query and document embeddings are identical")
	}
	// Large batches run in parallel and keep order.
	many := make([]string, 500)
	for i := range many {
		many[i] = docs[i%3]
	}
	mv, err := b.Embed(ctx, many, Document)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range mv {
		if dot(v, dv[i%3]) < 0.99999 {
			t.Fatalf("batch item %d differs", i)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.Embed(cctx, many, Document); err == nil {
		t.Fatal("cancelled context ignored")
	}
}

// TestBuiltinQuality is the retrieval check of the builtin embedder: 500
// documented functions of the Go standard library (which the model was not
// trained on), query = first sentence of the doc comment, document = the
// function without its doc comment. The builtin embedder must beat BM25
// over the same documents and codetok terms on MRR@10.
func TestBuiltinQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	root := filepath.Join(runtime.GOROOT(), "src")
	pairs, err := evalset.GoFuncs(root, 500)
	if err != nil {
		t.Skip("GOROOT source not available:", err)
	}
	b, err := NewBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	docs := make([]string, len(pairs))
	queries := make([]string, len(pairs))
	stripped := make([]string, len(pairs))
	for i, p := range pairs {
		docs[i], queries[i], stripped[i] = p.Doc, p.Query, evalset.StripName(p)
	}
	D, err := b.Embed(ctx, docs, Document)
	if err != nil {
		t.Fatal(err)
	}
	Q, _ := b.Embed(ctx, queries, Query)
	Q2, _ := b.Embed(ctx, stripped, Query)
	bm := evalset.NewBM25(docs)
	B := make([][]float64, len(pairs))
	B2 := make([][]float64, len(pairs))
	for i := range pairs {
		B[i] = bm.Query(queries[i])
		B2[i] = bm.Query(stripped[i])
	}
	n := len(pairs)
	emb := evalset.MRR(n, 10, func(i, j int) float64 { return dot(Q[i], D[j]) })
	emb2 := evalset.MRR(n, 10, func(i, j int) float64 { return dot(Q2[i], D[j]) })
	bm25 := evalset.MRR(n, 10, func(i, j int) float64 { return B[i][j] })
	bm252 := evalset.MRR(n, 10, func(i, j int) float64 { return B2[i][j] })
	t.Logf("%d GOROOT functions, MRR@10: builtin %.4f, BM25 %.4f", n, emb, bm25)
	t.Logf("queries without the leading function name: builtin %.4f, BM25 %.4f", emb2, bm252)
	if emb <= bm25 {
		t.Errorf("builtin embedder (%.4f) does not beat BM25 (%.4f)", emb, bm25)
	}
}

// goChunks cuts the Go files under root into chunks of 60 lines.
func goChunks(tb testing.TB, root string, limit int) []string {
	var chunks []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(chunks) >= limit {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		lines := strings.SplitAfter(string(data), "\n")
		for i := 0; i < len(lines) && len(chunks) < limit; i += 60 {
			chunks = append(chunks, strings.Join(lines[i:min(len(lines), i+60)], ""))
		}
		return nil
	})
	if len(chunks) == 0 {
		tb.Skip("no GOROOT source")
	}
	return chunks
}

// BenchmarkBuiltinChunk embeds one 60-line chunk of Go code at a time.
func BenchmarkBuiltinChunk(b *testing.B) {
	e, err := NewBuiltin()
	if err != nil {
		b.Fatal(err)
	}
	chunks := goChunks(b, filepath.Join(runtime.GOROOT(), "src", "net", "http"), 2000)
	dst := make([]float32, e.Dim())
	bytes := 0
	for _, c := range chunks {
		bytes += len(c)
	}
	b.SetBytes(int64(bytes / len(chunks)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.m.Embed(dst, chunks[i%len(chunks)], false)
	}
}

// TestBuiltinThroughput reports chunks per second over GOROOT/src cut
// into 60-line chunks (run with -run Throughput -v; skipped in -short).
func TestBuiltinThroughput(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	e, err := NewBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	chunks := goChunks(t, filepath.Join(runtime.GOROOT(), "src"), 1<<30)
	bytes := 0
	for _, c := range chunks {
		bytes += len(c)
	}
	start := time.Now()
	if _, err := e.Embed(context.Background(), chunks, Document); err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	t.Logf("GOROOT/src: %d chunks of 60 lines (%.0f MB) in %v on %d CPUs: %.0f chunks/s, %.1f MB/s, %.1f µs/chunk/CPU",
		len(chunks), float64(bytes)/1e6, el.Round(time.Millisecond), runtime.GOMAXPROCS(0),
		float64(len(chunks))/el.Seconds(), float64(bytes)/1e6/el.Seconds(),
		el.Seconds()*1e6*float64(runtime.GOMAXPROCS(0))/float64(len(chunks)))
}
