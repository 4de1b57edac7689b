// Command cidx-train-embed trains the builtin embedder's model file,
// internal/embed/builtin/code-v1.bin.
//
// It reads source code (Go, Python, JavaScript/TypeScript) from the given
// roots, cuts it into code units (a function or type with its doc comment;
// see internal/embed/codeunit), tokenises them with codetok, and trains one
// vector per term in two stages:
//
//  1. Skip-gram with negative sampling in the style of Facebook's Neural Code
//     Search: the context of a term is its code unit, so the words of a doc
//     comment land near the identifiers of the code they describe.
//  2. Contrastive tuning on (first doc sentence, code) pairs of the same
//     corpus: the pooled query vector must pick its own code out of a batch
//     (in-batch softmax). This also learns each term's pooling weight,
//     starting from its IDF.
//
// Everything is deterministic: files are read in lexical order, sampling
// is by path hash, and SGD uses a fixed-seed generator on one goroutine per
// stage (parallel stages reduce in a fixed order).
//
// The Go standard library is the evaluation set, so it is never trained
// on: GOROOT is excluded from the roots, and every unit whose code or first
// doc sentence also occurs in GOROOT/src (copies in golang.org/x/...) is
// dropped.
//
// The shipped file was built with (see internal/embed/builtin/README.md):
//
//	go run ./cmd/cidx-train-embed -out internal/embed/builtin/code-v1.bin
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/cidx/cidx/internal/embed/evalset"
	"github.com/cidx/cidx/internal/embed/tokvec"
	"github.com/viterin/vek/vek32"
)

func main() {
	log.SetFlags(0)
	var (
		roots       = flag.String("roots", strings.Join(defaultRoots(), ","), "comma-separated source roots to train on")
		exclude     = flag.String("exclude", "", "comma-separated directories to skip (GOROOT is always skipped)")
		sample      = flag.Float64("sample", 1, "fraction of files to read (deterministic by path hash)")
		maxFile     = flag.Int64("max-file", 1<<20, "skip files larger than this many bytes")
		vocabSize   = flag.Int("vocab", 28000, "vocabulary size")
		dim         = flag.Int("dim", 256, "vector dimension")
		out         = flag.String("out", "internal/embed/builtin/code-v1.bin", "output model file")
		name        = flag.String("name", "code-v1", "model name (part of the embedder ID)")
		seed        = flag.Uint64("seed", 1, "random seed")
		initScale   = flag.Float64("init-scale", 1, "length of the random part of the initial vectors")
		sgMix       = flag.Float64("sg-mix", 1, "length of the skip-gram part of the initial vectors")
		sgCache     = flag.String("sg-cache", "", "development: file to load skip-gram vectors from, or save them to")
		common      = flag.Int("common", 0, "number of common components to project out (SIF)")
		manifestIn  = flag.String("manifest", "", "train only on the package roots listed in this manifest (reproduces a shipped model)")
		manifestOut = flag.String("manifest-out", "", "write the package roots trained on to this file")
		oovScale    = flag.Float64("oov-scale", 1, "weight of out-of-vocabulary terms relative to ln(N)")
		eval        = flag.Int("eval", 500, "report MRR@10 on this many GOROOT functions (0: skip)")
		sg          sgnsConfig
		tc          tuneConfig
	)
	flag.IntVar(&sg.Epochs, "sg-epochs", 1, "skip-gram epochs")
	flag.IntVar(&sg.Contexts, "sg-contexts", 5, "skip-gram contexts sampled per term from its unit")
	flag.IntVar(&sg.Negatives, "sg-negatives", 5, "skip-gram negative samples")
	flag.Float64Var(&sg.LR, "sg-lr", 0.025, "skip-gram initial learning rate")
	flag.Float64Var(&sg.Subsample, "sg-subsample", 1e-4, "skip-gram frequent-term subsampling threshold")
	flag.IntVar(&sg.MaxSpan, "sg-span", 200, "skip-gram: split units longer than this many terms")
	flag.IntVar(&tc.Epochs, "tune-epochs", 4, "contrastive tuning epochs (0: skip)")
	flag.IntVar(&tc.Batch, "tune-batch", 256, "contrastive tuning batch size")
	flag.Float64Var(&tc.LR, "tune-lr", 0.05, "contrastive tuning learning rate (Adagrad)")
	flag.Float64Var(&tc.WeightLR, "tune-weight-lr", 0.05, "learning rate of the pooling weights (0: keep IDF)")
	flag.Float64Var(&tc.Scale, "tune-scale", 20, "contrastive tuning softmax scale")
	flag.Float64Var(&tc.Head, "head", 4, "weight of the terms on a document's first line")
	flag.BoolVar(&tc.NamePairs, "name-pairs", false, "also tune on (name, code) pairs of undocumented units")
	flag.IntVar(&tc.Local, "tune-local", 0, "contrastive tuning: batch runs of this many pairs from the same files (0: random batches)")
	flag.IntVar(&tc.MaxCode, "tune-max-code", 400, "contrastive tuning: code terms per unit")
	flag.Parse()

	start := time.Now()
	goroot := runtime.GOROOT()
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		goroot = strings.TrimSpace(string(out))
	}
	rootList := splitList(*roots)
	excl := append(splitList(*exclude), goroot)
	var only map[string]bool
	wantFP := ""
	if *manifestIn != "" {
		var err error
		if only, wantFP, err = readManifest(*manifestIn); err != nil {
			log.Fatal(err)
		}
	}
	var files []string
	pkgs := map[string]*manifestEntry{}
	for _, f := range listFiles(rootList, excl, *maxFile) {
		root, rel := f, f
		for _, r := range rootList {
			if p, err := filepath.Rel(r, f); err == nil && !strings.HasPrefix(p, "..") {
				root, rel = r, p
				break
			}
		}
		if !sampled(rel, *sample) {
			continue
		}
		pkg := packageRoot(root, f)
		if only != nil && !only[pkg] {
			continue
		}
		files = append(files, f)
		e := pkgs[pkg]
		if e == nil {
			e = &manifestEntry{}
			pkgs[pkg] = e
		}
		e.files++
		if info, err := os.Stat(f); err == nil {
			e.bytes += info.Size()
		}
	}
	log.Printf("roots: %s", strings.Join(rootList, ", "))
	log.Printf("excluded: %s", strings.Join(excl, ", "))
	workers := runtime.GOMAXPROCS(0)
	perFile, sums := extractAll(files, workers)
	fp := fingerprint(files, sums)
	log.Printf("%d files in %d packages, fingerprint %s", len(files), len(pkgs), fp)
	if wantFP != "" && wantFP != fp {
		log.Printf("WARNING: the files differ from the manifest's (fingerprint %s): the model will differ", wantFP)
	}
	if *manifestOut != "" {
		hdr := []string{"Corpus of " + *out + " (cmd/cidx-train-embed): package root, files, bytes.",
			"roots: " + strings.Join(rootList, ", "), "excluded: " + strings.Join(excl, ", ")}
		if err := writeManifest(*manifestOut, pkgs, fp, hdr); err != nil {
			log.Fatal(err)
		}
	}
	st := corpusStats{files: map[string]int64{}, bytes: map[string]int64{}, units: map[string]int64{}, docUnits: map[string]int64{}}
	for i, f := range files {
		if info, err := os.Stat(f); err == nil {
			lang := "(no units)"
			if len(perFile[i]) > 0 {
				lang = perFile[i][0].lang
			}
			st.files[lang]++
			st.bytes[lang] += info.Size()
		}
	}
	blockCode, blockQuery := goroBlocklist(filepath.Join(goroot, "src"))
	c := buildCorpus(perFile, *vocabSize, blockCode, blockQuery, &st)
	perFile = nil
	c.summary = st
	printStats(c, time.Since(start))

	// Stage 1: skip-gram.
	t0 := time.Now()
	// The starting vectors: random rows of length initScale (near-orthogonal:
	// exact matches stand out) plus sgMix times the unit-length skip-gram
	// vectors (related terms start close).
	E := make([]float32, len(c.vocab)**dim)
	r := &rng{s: *seed}
	a := *initScale * math.Sqrt(3/float64(*dim))
	for i := range E {
		E[i] = float32((2*r.float() - 1) * a)
	}
	if sg.Epochs > 0 && *sgMix > 0 {
		S := loadOrTrainSGNS(c, *dim, sg, *seed, *sgCache)
		for i := 0; i < len(c.vocab); i++ {
			row := S[i**dim : (i+1)**dim]
			if n := vek32.Norm(row); n > 0 {
				axpy(E[i**dim:(i+1)**dim], row, float32(*sgMix)/n)
			}
		}
	}
	log.Printf("skip-gram: %.0fs", time.Since(t0).Seconds())

	// Stage 2: contrastive tuning.
	t0 = time.Now()
	idf := idfWeights(c)
	p := &params{dim: *dim, E: E, vocabLen: len(c.vocab),
		logWDoc: make([]float32, len(idf)), logWQry: make([]float32, len(idf)),
		gE: make([]float32, len(idf)), gWDoc: make([]float32, len(idf)), gWQry: make([]float32, len(idf))}
	for i, w := range idf {
		p.logWDoc[i] = float32(math.Log(float64(w)))
		p.logWQry[i] = p.logWDoc[i]
	}
	pairs := makePairs(c, tc.MaxCode, float32(tc.Head), tc.NamePairs)
	var train, valid []pair
	for i, pr := range pairs {
		if i%40 == 7 && len(valid) < 2000 {
			valid = append(valid, pr)
		} else {
			train = append(train, pr)
		}
	}
	if tc.Epochs > 0 {
		tune(p, train, valid, tc, *seed, workers)
	} else {
		log.Printf("validation MRR@10 %.4f", validMRR(p, valid))
	}
	log.Printf("tuning: %.0fs", time.Since(t0).Seconds())

	m := assemble(c, p, *name, *oovScale)
	m.HeadWeight = float32(tc.Head)
	m.Common = commonComponents(p, train, *common, *seed)
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	if err := m.Write(f); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	info, _ := os.Stat(*out)
	log.Printf("wrote %s (%.2f MB, %d terms x %d dims); total time %.0fs", *out, float64(info.Size())/1e6, len(m.Vocab), m.Dim, time.Since(start).Seconds())
	if *eval > 0 {
		data, err := os.ReadFile(*out)
		if err != nil {
			log.Fatal(err)
		}
		m2, err := tokvec.Read(data)
		if err != nil {
			log.Fatal(err)
		}
		evaluate(m2, filepath.Join(goroot, "src"), *eval)
	}
}

// assemble builds the model from the trained parameters.
func assemble(c *corpus, p *params, name string, oovScale float64) *tokvec.Model {
	V := len(c.vocab)
	m := &tokvec.Model{Name: name, Dim: p.dim, Vocab: c.vocab, Vec: p.E,
		DocWeight: make([]float32, V), QueryWeight: make([]float32, V), OOVHashes: 4}
	for i := 0; i < V; i++ {
		m.DocWeight[i] = float32(math.Exp(float64(p.logWDoc[i])))
		m.QueryWeight[i] = float32(math.Exp(float64(p.logWQry[i])))
	}
	// An out-of-vocabulary term is rarer than any vocabulary term: give it
	// the largest IDF, ln(N), times the median length of the vectors of
	// the 5000 most frequent terms (the hashed OOV vector has length 1),
	// times oovScale.
	var norms []float64
	for i := 0; i < min(V, 5000); i++ {
		row := p.E[i*p.dim : (i+1)*p.dim]
		norms = append(norms, math.Sqrt(float64(vek32.Dot(row, row))))
	}
	sort.Float64s(norms)
	w := float32(math.Log(float64(c.nUnits)) * norms[len(norms)/2] * oovScale)
	m.OOVWeight, m.OOVQuery = w, w
	m.Init()
	return m
}

// evaluate prints MRR@10 of the model and of BM25 on n GOROOT functions.
func evaluate(m *tokvec.Model, root string, n int) {
	pairs, err := evalset.GoFuncs(root, n)
	if err != nil {
		log.Printf("eval: %v", err)
		return
	}
	docs := make([]string, len(pairs))
	for i, p := range pairs {
		docs[i] = p.Doc
	}
	D := make([][]float32, len(pairs))
	Q := make([][]float32, len(pairs))
	Q2 := make([][]float32, len(pairs))
	for i, p := range pairs {
		D[i] = make([]float32, m.Dim)
		m.Embed(D[i], p.Doc, false)
		Q[i] = make([]float32, m.Dim)
		m.Embed(Q[i], p.Query, true)
		Q2[i] = make([]float32, m.Dim)
		m.Embed(Q2[i], evalset.StripName(p), true)
	}
	bm := evalset.NewBM25(docs)
	B := make([][]float64, len(pairs))
	B2 := make([][]float64, len(pairs))
	for i, p := range pairs {
		B[i] = bm.Query(p.Query)
		B2[i] = bm.Query(evalset.StripName(p))
	}
	k := len(pairs)
	showFailures(m, pairs, D, Q, B, 25)
	emb := evalset.MRR(k, 10, func(i, j int) float64 { return float64(vek32.Dot(Q[i], D[j])) })
	emb2 := evalset.MRR(k, 10, func(i, j int) float64 { return float64(vek32.Dot(Q2[i], D[j])) })
	bm25 := evalset.MRR(k, 10, func(i, j int) float64 { return B[i][j] })
	bm252 := evalset.MRR(k, 10, func(i, j int) float64 { return B2[i][j] })
	log.Printf("GOROOT eval, %d functions, MRR@10: builtin %.4f, BM25 %.4f; queries without the leading name: builtin %.4f, BM25 %.4f", k, emb, bm25, emb2, bm252)
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// defaultRoots are the Go module cache, the Python standard library and
// the global node_modules directory, when present.
func defaultRoots() []string {
	var roots []string
	if out, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
		if p := strings.TrimSpace(string(out)); p != "" {
			roots = append(roots, p)
		}
	}
	if out, err := exec.Command("python3", "-c", "import sysconfig;print(sysconfig.get_paths()['stdlib'])").Output(); err == nil {
		if p := strings.TrimSpace(string(out)); p != "" {
			roots = append(roots, p)
		}
	}
	for _, p := range []string{"/usr/lib/node_modules", "/usr/local/lib/node_modules"} {
		if _, err := os.Stat(p); err == nil {
			roots = append(roots, p)
		}
	}
	return roots
}

func printStats(c *corpus, elapsed time.Duration) {
	st := c.summary
	var b bytes.Buffer
	langs := []string{}
	for l := range st.files {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	for _, l := range langs {
		fmt.Fprintf(&b, "  %-10s %7d files %8.1f MB %8d units (%d documented)\n", l, st.files[l], float64(st.bytes[l])/1e6, st.units[l], st.docUnits[l])
	}
	pairs := 0
	for _, u := range c.units {
		if len(u.query) >= 2 {
			pairs++
		}
	}
	fmt.Fprintf(&b, "  %d units after dropping %d duplicates and %d GOROOT copies; %d (doc sentence, code) pairs\n", c.nUnits, st.dupUnits, st.decontam, pairs)
	fmt.Fprintf(&b, "  %d terms (%d distinct); vocabulary %d covers %.2f%% of term occurrences\n", st.tokens, st.distinctTerm, len(c.vocab), 100*float64(len(c.toks))/float64(max(1, st.tokens)))
	log.Printf("corpus (%.1fs):\n%s", elapsed.Seconds(), b.String())
}
