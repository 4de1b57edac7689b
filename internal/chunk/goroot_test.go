package chunk

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gorootFiles lists the files under $GOROOT with one of the extensions, in
// walk (lexical) order, or skips when there is no GOROOT source tree.
func gorootFiles(tb testing.TB, dir string, exts ...string) []string {
	tb.Helper()
	goroot := runtime.GOROOT()
	if _, err := os.Stat(filepath.Join(goroot, "src", "net", "http", "server.go")); err != nil {
		tb.Skipf("no GOROOT source tree: %v", err)
	}
	var files []string
	err := filepath.WalkDir(filepath.Join(goroot, dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			for _, e := range exts {
				if strings.HasSuffix(p, e) {
					files = append(files, p)
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

func langOf(p string) string {
	switch filepath.Ext(p) {
	case ".go":
		return "go"
	case ".py":
		return "python"
	case ".js":
		return "javascript"
	}
	return "text"
}

// TestGOROOTSample checks the invariants on 200 Go files spread over
// GOROOT/src (all of them with CIDX_CHUNK_GOROOT_ALL=1) and on GOROOT's
// JavaScript and Python files, and that definitions become chunks.
func TestGOROOTSample(t *testing.T) {
	files := gorootFiles(t, "src", ".go")
	if os.Getenv("CIDX_CHUNK_GOROOT_ALL") == "" && len(files) > 200 {
		step := len(files) / 200
		var some []string
		for i := 0; i < len(files) && len(some) < 200; i += step {
			some = append(some, files[i])
		}
		files = some
	}
	files = append(files, gorootFiles(t, ".", ".js", ".py")...)
	var defs, all int
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cs, _ := check(t, f, langOf(f), src, Options{})
		for _, c := range cs {
			all++
			if c.Symbol != "" {
				defs++
			}
		}
	}
	t.Logf("%d files, %d chunks, %d of them definitions", len(files), all, defs)
	if defs < all/2 {
		t.Errorf("only %d of %d chunks hold a definition", defs, all)
	}

	src, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "net", "http", "server.go"))
	if err != nil {
		t.Fatal(err)
	}
	cs, ss := check(t, "server.go", "go", src, Options{})
	c := chunkWith(t, cs, "Server.ListenAndServe")
	if c.Kind != KindMethod || !strings.Contains(c.Content, "func (s *Server) ListenAndServe() error {") ||
		!strings.HasPrefix(c.Content, "// ListenAndServe listens") {
		t.Errorf("ListenAndServe chunk: %+v", c)
	}
	found := false
	for _, y := range ss {
		found = found || y.Name == "Server.Handler" && y.Kind == KindField
	}
	if !found {
		t.Error("no field symbol Server.Handler")
	}
}

// realFiles reads a few GOROOT files of different shapes.
func realFiles(tb testing.TB) map[string][]byte {
	tb.Helper()
	goroot := runtime.GOROOT()
	out := map[string][]byte{}
	for _, p := range []string{
		"src/net/http/server.go", "src/runtime/proc.go", "src/go/parser/parser.go", "src/fmt/print.go",
	} {
		b, err := os.ReadFile(filepath.Join(goroot, p))
		if err != nil {
			tb.Skipf("no GOROOT source tree: %v", err)
		}
		out[p] = b
	}
	return out
}

// BenchmarkSplit chunks a few real Go files; the MB/s column is the
// single-goroutine throughput.
func BenchmarkSplit(b *testing.B) {
	files := realFiles(b)
	for _, p := range []string{"src/net/http/server.go", "src/runtime/proc.go", "src/go/parser/parser.go", "src/fmt/print.go"} {
		src := files[p]
		b.Run(filepath.Base(p), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				Split(p, "go", src, Options{})
			}
		})
	}
}

// BenchmarkGOROOT chunks every .go file of GOROOT/src on GOMAXPROCS
// goroutines (files read beforehand, so that it measures chunking).
// Run it with -benchtime=1x: s/op is the time for the whole tree.
func BenchmarkGOROOT(b *testing.B) {
	files := gorootFiles(b, "src", ".go")
	srcs := make([][]byte, len(files))
	var total int64
	for i, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		srcs[i] = src
		total += int64(len(src))
	}
	b.SetBytes(total)
	b.ResetTimer()
	var nchunks, nsyms atomic.Int64
	start, cpu0 := time.Now(), cpuTime()
	for b.Loop() {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				for {
					i := int(next.Add(1)) - 1
					if i >= len(files) {
						return
					}
					cs, ss := Split(files[i], "go", srcs[i], Options{})
					nchunks.Add(int64(len(cs)))
					nsyms.Add(int64(len(ss)))
				}
			})
		}
		wg.Wait()
	}
	cpu := (cpuTime() - cpu0) / time.Duration(b.N)
	b.ReportMetric(cpu.Seconds(), "cpu-s/op")
	b.ReportMetric(float64(len(files)), "files/op")
	b.ReportMetric(float64(nchunks.Load())/float64(b.N), "chunks/op")
	b.ReportMetric(float64(nsyms.Load())/float64(b.N), "symbols/op")
	b.Logf("%d files, %.1f MB in %v per pass on %d procs, %v of CPU (%.1f MB per CPU second)",
		len(files), float64(total)/1e6, time.Since(start)/time.Duration(b.N), runtime.GOMAXPROCS(0),
		cpu, float64(total)/1e6/cpu.Seconds())
}
