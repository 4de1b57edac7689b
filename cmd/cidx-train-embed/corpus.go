package main

import (
	"crypto/sha256"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/cidx/cidx/internal/codetok"
	"github.com/cidx/cidx/internal/embed/codeunit"
)

// corpus is the tokenised training corpus: every unit is a run of term ids
// in toks: its doc terms toks[docStart:codeStart] and code terms
// toks[codeStart:end]. Out-of-vocabulary terms are dropped.
type corpus struct {
	vocab   []string
	index   map[string]int32
	counts  []int64 // term frequency in the corpus
	df      []int32 // number of units containing the term
	toks    []int32
	units   []unitSpan
	nUnits  int
	summary corpusStats
}

type unitSpan struct {
	docStart, codeStart, end int32
	headEnd                  int32 // code terms before headEnd are on the code's first line
	lang                     uint8
	query                    []int32 // first sentence of the doc, for supervised pairs
}

type corpusStats struct {
	files, bytes         map[string]int64
	units, docUnits      map[string]int64
	dupUnits, decontam   int64
	skippedFiles         int64
	tokens, distinctTerm int64
}

// rawUnit is a unit before tokenisation.
type rawUnit struct {
	lang  string
	doc   string
	query string
	code  string
}

var langIDs = map[string]uint8{"go": 0, "python": 1, "javascript": 2}

// listFiles returns the source files under roots, in a deterministic order,
// skipping anything under an excluded directory.
func listFiles(roots, exclude []string, maxFile int64) []string {
	var files []string
	for _, root := range roots {
		root = filepath.Clean(root)
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				name := d.Name()
				if p != root && (name == ".git" || name == "testdata" || name == "__pycache__" || name == "site-packages" && !strings.Contains(root, "site-packages")) {
					return filepath.SkipDir
				}
				for _, x := range exclude {
					if x != "" && (p == x || strings.HasPrefix(p, x+string(filepath.Separator))) {
						return filepath.SkipDir
					}
				}
				return nil
			}
			if codeunit.Lang(p) == "" || strings.HasSuffix(p, ".min.js") {
				return nil
			}
			if info, err := d.Info(); err != nil || info.Size() > maxFile || !info.Mode().IsRegular() {
				return nil
			}
			files = append(files, p)
			return nil
		})
	}
	return files
}

// sampled reports whether path is in the deterministic sample of the given
// fraction (by FNV hash of the path relative to its root).
func sampled(rel string, frac float64) bool {
	if frac >= 1 {
		return true
	}
	h := fnv.New64a()
	h.Write([]byte(rel))
	return float64(h.Sum64()%1_000_000) < frac*1_000_000
}

// extractAll reads and cuts files into units with a worker pool, returning
// them in file order.
func extractAll(files []string, workers int) ([][]rawUnit, [][32]byte) {
	out := make([][]rawUnit, len(files))
	sums := make([][32]byte, len(files))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				src, err := os.ReadFile(files[i])
				if err != nil {
					continue
				}
				sums[i] = sha256.Sum256(src)
				for _, u := range codeunit.Extract(files[i], src) {
					r := rawUnit{lang: u.Lang, doc: u.Doc, code: u.Code}
					if u.Doc != "" {
						r.query = codeunit.FirstSentence(u.Doc)
					}
					out[i] = append(out[i], r)
				}
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	return out, sums
}

func normHash(s string) uint64 {
	h := fnv.New64a()
	for _, f := range strings.Fields(s) {
		h.Write([]byte(f))
		h.Write([]byte{' '})
	}
	return h.Sum64()
}

// goroBlocklist returns the hashes of the code and of the first doc
// sentence of every function in the Go standard library, so that copies of
// it elsewhere (golang.org/x/..., forks) are not trained on.
func goroBlocklist(goroot string) (code, query map[uint64]bool) {
	code, query = map[uint64]bool{}, map[uint64]bool{}
	files := listFiles([]string{goroot}, nil, 4<<20)
	var gofiles []string
	for _, f := range files {
		if strings.HasSuffix(f, ".go") {
			gofiles = append(gofiles, f)
		}
	}
	perFile, _ := extractAll(gofiles, runtime.GOMAXPROCS(0))
	for _, units := range perFile {
		for _, u := range units {
			if strings.Count(u.code, "\n") >= 2 {
				code[normHash(u.code)] = true
			}
			if u.query != "" && len(strings.Fields(u.query)) >= 3 {
				query[normHash(u.query)] = true
			}
		}
	}
	return code, query
}

// buildCorpus tokenises the units, keeping the vocabSize most frequent terms
// (ties broken alphabetically).
func buildCorpus(perFile [][]rawUnit, vocabSize int, blockCode, blockQuery map[uint64]bool, st *corpusStats) *corpus {
	seen := map[uint64]bool{}
	var units []rawUnit
	for _, fu := range perFile {
		for _, u := range fu {
			if u.lang == "" {
				continue
			}
			h := normHash(u.doc + "\x00" + u.code)
			if seen[h] {
				st.dupUnits++
				continue
			}
			seen[h] = true
			if blockCode[normHash(u.code)] || (u.query != "" && blockQuery[normHash(u.query)]) {
				st.decontam++
				continue
			}
			units = append(units, u)
			st.units[u.lang]++
			if u.doc != "" {
				st.docUnits[u.lang]++
			}
		}
	}
	// Count terms.
	counts := map[string]int64{}
	var sc codetok.Scanner
	count := func(s string) {
		sc.Scan(s, func(t []byte) {
			counts[string(t)]++
		})
	}
	for _, u := range units {
		count(u.doc)
		count(u.code)
	}
	st.distinctTerm = int64(len(counts))
	type tc struct {
		t string
		c int64
	}
	all := make([]tc, 0, len(counts))
	for t, c := range counts {
		all = append(all, tc{t, c})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].c != all[j].c {
			return all[i].c > all[j].c
		}
		return all[i].t < all[j].t
	})
	if len(all) > vocabSize {
		all = all[:vocabSize]
	}
	c := &corpus{index: map[string]int32{}}
	for i, x := range all {
		c.vocab = append(c.vocab, x.t)
		c.index[x.t] = int32(i)
	}
	c.counts = make([]int64, len(c.vocab))
	c.df = make([]int32, len(c.vocab))
	mark := make([]int32, len(c.vocab))
	for i := range mark {
		mark[i] = -1
	}
	appendIDs := func(s string, unit int32) {
		sc.Scan(s, func(t []byte) {
			if id, ok := c.index[string(t)]; ok {
				c.toks = append(c.toks, id)
				c.counts[id]++
				if mark[id] != unit {
					mark[id] = unit
					c.df[id]++
				}
			}
			st.tokens++
		})
	}
	for i, u := range units {
		span := unitSpan{docStart: int32(len(c.toks)), lang: langIDs[u.lang]}
		appendIDs(u.doc, int32(i))
		span.codeStart = int32(len(c.toks))
		// A unit starts with its declaration, so its head is its first
		// line (tokvec.SplitHead would also refuse the head of a Python
		// method whose body has a string at column 0).
		head, rest := firstLine(u.code)
		appendIDs(head, int32(i))
		span.headEnd = int32(len(c.toks))
		appendIDs(rest, int32(i))
		span.end = int32(len(c.toks))
		if u.query != "" {
			sc.Scan(u.query, func(t []byte) {
				if id, ok := c.index[string(t)]; ok {
					span.query = append(span.query, id)
				}
			})
		}
		c.units = append(c.units, span)
	}
	c.nUnits = len(units)
	return c
}

// firstLine splits text after its first non-blank line.
func firstLine(text string) (head, rest string) {
	i := 0
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r') {
		i++
	}
	if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
		return text[:i+j], text[i+j:]
	}
	return text, ""
}
