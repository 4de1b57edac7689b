package chunk

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"testing"
	"time"
)

// rssBytes returns the resident set size of this process (Linux), which,
// unlike the Go heap statistics, includes tree-sitter's C allocations.
func rssBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no /proc/self/statm: %v", err)
	}
	f := bytes.Fields(b)
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// TestNoLeak splits thousands of files on several goroutines, with
// garbage collections in between that empty the parser pools, and checks
// that the process does not grow: trees, cursors and dropped parsers are
// all freed.
func TestNoLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	inputs := append([]sample{}, samples...)
	inputs = append(inputs, sample{"long.go", "go", longFunc(300)})
	for p, src := range realFilesOrNone() {
		inputs = append(inputs, sample{p, "go", string(src)})
	}
	round := func() {
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range inputs {
					s := inputs[(i+g)%len(inputs)]
					Split(s.path, s.lang, []byte(s.src), Options{})
				}
			})
		}
		wg.Wait()
		runtime.GC() // twice: the pools drop their parsers
		runtime.GC()
	}
	settle := func() int64 {
		runtime.GC()
		runtime.GC()
		debug.FreeOSMemory()
		return rssBytes(t)
	}
	const warm, rounds = 10, 60
	for range warm {
		round()
	}
	before := settle()
	for range rounds {
		round()
	}
	after := settle()
	t.Logf("%d splits; RSS %d MB -> %d MB", (warm+rounds)*4*len(inputs), before>>20, after>>20)
	if after-before > 32<<20 {
		t.Errorf("RSS grew by %d MB over %d rounds", (after-before)>>20, rounds)
	}
	// Every round made new parsers (the collections emptied the pools);
	// the dropped ones must have been closed. Cleanups run asynchronously.
	live := liveParsers.Load()
	for deadline := time.Now().Add(5 * time.Second); live > 32 && time.Now().Before(deadline); live = liveParsers.Load() {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if live > 32 {
		t.Errorf("%d parsers still open", live)
	}
}

// realFilesOrNone is realFiles without skipping: a couple of mid-sized
// GOROOT files when there are some.
func realFilesOrNone() map[string][]byte {
	out := map[string][]byte{}
	for _, p := range []string{"src/fmt/print.go", "src/strings/strings.go"} {
		if b, err := os.ReadFile(runtime.GOROOT() + "/" + p); err == nil {
			out[p] = b
		}
	}
	return out
}
