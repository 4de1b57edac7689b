// Command cidx-train-embed trains the builtin embedder's model file,
// internal/embed/builtin/code-v1.bin (see internal/embed/builtin/README.md).
//
// It reads source code (Go, Python, JavaScript/TypeScript) from the given
// roots, cuts it into code units (a function, method, class or type with
// its doc comment or docstring; see internal/embed/codeunit), tokenises them
// with codetok, and trains one vector per term in two stages:
//
//  1. Skip-gram with negative sampling in the style of Facebook's Neural Code
//     Search: the context of a term is its code unit, so the words of a doc
//     comment land near the identifiers of the code they describe.
//  2. Contrastive tuning on (first doc sentence, code) pairs of the same
//     corpus, starting from random near-orthogonal vectors plus the
//     skip-gram vectors: the pooled query must pick its own code out of a
//     batch (in-batch softmax). This also learns each term's pooling
//     weights, starting from its IDF.
//
// It prints corpus statistics, the time of each stage and, unless -eval 0,
// MRR@10 of the new model and of BM25 on 500 Go standard library functions.
//
// Everything is deterministic: files are read in lexical order of the
// roots as given, sampling is by path hash, and SGD uses a fixed-seed
// generator (parallel steps write disjoint memory and reduce in a fixed
// order), so the same files, flags and CPU type give the same bytes.
//
// The Go standard library is the evaluation set, so it is never trained
// on: GOROOT is excluded from the roots, and every unit whose code or first
// doc sentence also occurs in GOROOT/src (copies in golang.org/x/...) is
// dropped.
//
// The shipped file was built from the repository root, in 6.5 minutes on 2
// cores, with:
//
//	go run ./cmd/cidx-train-embed \
//	  -roots "$(go env GOMODCACHE),/root/.pyenv/versions/3.11.7/lib/python3.11,/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages,/usr/lib/node_modules,/usr/lib/google-cloud-sdk,.ci/tools/conformance-0.2.0-alpha.12/node_modules" \
//	  -out internal/embed/builtin/code-v1.bin \
//	  -manifest-out internal/embed/builtin/corpus.txt
//
// Add -manifest internal/embed/builtin/corpus.txt to train on exactly the
// packages listed there when the module cache has grown since.
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

// options are the trainer's settings; see the flags in main.
type options struct {
	Roots, Exclude []string
	Sample         float64
	MaxFile        int64
	VocabSize, Dim int
	Out, Name      string
	Seed           uint64
	InitScale      float64
	SGMix          float64
	SGCache        string
	OOVScale       float64
	Common         int
	ManifestIn     string
	ManifestOut    string
	Eval           int
	ShowFailures   int
	Workers        int
	GOROOT         string
	SG             sgnsConfig
	Tune           tuneConfig
}

func main() {
	log.SetFlags(0)
	var o options
	roots := flag.String("roots", strings.Join(defaultRoots(), ","), "comma-separated source roots to train on")
	exclude := flag.String("exclude", "", "comma-separated directories to skip (GOROOT is always skipped)")
	flag.Float64Var(&o.Sample, "sample", 1, "fraction of files to read (deterministic by path hash)")
	flag.Int64Var(&o.MaxFile, "max-file", 1<<20, "skip files larger than this many bytes")
	flag.IntVar(&o.VocabSize, "vocab", 28000, "vocabulary size")
	flag.IntVar(&o.Dim, "dim", 256, "vector dimension")
	flag.StringVar(&o.Out, "out", "internal/embed/builtin/code-v1.bin", "output model file")
	flag.StringVar(&o.Name, "name", "code-v1", "model name (part of the embedder ID: builtin:<name>:<dim>)")
	flag.Uint64Var(&o.Seed, "seed", 1, "random seed")
	flag.Float64Var(&o.InitScale, "init-scale", 1, "length of the random part of the initial vectors")
	flag.Float64Var(&o.SGMix, "sg-mix", 0.5, "length of the skip-gram part of the initial vectors")
	flag.StringVar(&o.SGCache, "sg-cache", "", "development: cache skip-gram vectors in files with this prefix")
	flag.Float64Var(&o.OOVScale, "oov-scale", 0.7, "weight of out-of-vocabulary terms relative to ln(N)")
	flag.IntVar(&o.Common, "common", 0, "number of common components to project out (SIF)")
	flag.StringVar(&o.ManifestIn, "manifest", "", "train only on the package roots listed in this manifest (to reproduce a shipped model)")
	flag.StringVar(&o.ManifestOut, "manifest-out", "", "write the package roots trained on to this file")
	flag.IntVar(&o.Eval, "eval", 500, "report MRR@10 on this many GOROOT functions (0: skip)")
	flag.IntVar(&o.ShowFailures, "show-failures", 0, "eval: list up to this many queries BM25 ranks first and the model does not")
	flag.IntVar(&o.SG.Epochs, "sg-epochs", 1, "skip-gram epochs (0: no skip-gram)")
	flag.IntVar(&o.SG.Contexts, "sg-contexts", 5, "skip-gram contexts sampled per term from its unit")
	flag.IntVar(&o.SG.Negatives, "sg-negatives", 5, "skip-gram negative samples")
	flag.Float64Var(&o.SG.LR, "sg-lr", 0.025, "skip-gram initial learning rate")
	flag.Float64Var(&o.SG.Subsample, "sg-subsample", 1e-4, "skip-gram frequent-term subsampling threshold")
	flag.IntVar(&o.SG.MaxSpan, "sg-span", 200, "skip-gram: split units longer than this many terms")
	flag.IntVar(&o.Tune.Epochs, "tune-epochs", 8, "contrastive tuning epochs (0: skip)")
	flag.IntVar(&o.Tune.Batch, "tune-batch", 256, "contrastive tuning batch size")
	flag.Float64Var(&o.Tune.LR, "tune-lr", 0.05, "contrastive tuning learning rate (Adagrad)")
	flag.Float64Var(&o.Tune.WeightLR, "tune-weight-lr", 0.05, "learning rate of the pooling weights (0: keep IDF)")
	flag.Float64Var(&o.Tune.Scale, "tune-scale", 20, "contrastive tuning softmax scale")
	flag.Float64Var(&o.Tune.Head, "head", 12, "weight of the terms on a document's first line")
	flag.IntVar(&o.Tune.Local, "tune-local", 0, "contrastive tuning: batch runs of this many pairs from the same files (0: random batches)")
	flag.IntVar(&o.Tune.MaxCode, "tune-max-code", 400, "contrastive tuning: code terms per unit")
	flag.Parse()
	o.Roots, o.Exclude = splitList(*roots), splitList(*exclude)
	o.Workers = runtime.GOMAXPROCS(0)
	o.GOROOT = runtime.GOROOT()
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		o.GOROOT = strings.TrimSpace(string(out))
	}
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

// run trains and writes the model.
func run(o options) error {
	start := time.Now()
	excl := append(append([]string(nil), o.Exclude...), o.GOROOT)
	var only map[string]bool
	wantFP := ""
	if o.ManifestIn != "" {
		var err error
		if only, wantFP, err = readManifest(o.ManifestIn); err != nil {
			return err
		}
	}
	var files []string
	pkgs := map[string]*manifestEntry{}
	for _, f := range listFiles(o.Roots, excl, o.MaxFile) {
		root, rel := f, f
		for _, r := range o.Roots {
			if p, err := filepath.Rel(r, f); err == nil && !strings.HasPrefix(p, "..") {
				root, rel = r, p
				break
			}
		}
		if !sampled(rel, o.Sample) {
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
	if len(files) == 0 {
		return fmt.Errorf("no source files under %s", strings.Join(o.Roots, ", "))
	}
	log.Printf("roots: %s", strings.Join(o.Roots, ", "))
	log.Printf("excluded: %s", strings.Join(excl, ", "))
	perFile, sums := extractAll(files, o.Workers)
	fp := fingerprint(files, sums)
	log.Printf("%d files in %d packages, fingerprint %s", len(files), len(pkgs), fp)
	if wantFP != "" && wantFP != fp {
		log.Printf("WARNING: the files differ from the manifest's (fingerprint %s): the model will differ", wantFP)
	}
	if o.ManifestOut != "" {
		hdr := []string{"Corpus of " + o.Out + " (cmd/cidx-train-embed): package root, files, bytes.",
			"roots: " + strings.Join(o.Roots, ", "), "excluded: " + strings.Join(excl, ", ")}
		if err := writeManifest(o.ManifestOut, pkgs, fp, hdr); err != nil {
			return err
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
	blockCode, blockQuery := goroBlocklist(filepath.Join(o.GOROOT, "src"))
	c := buildCorpus(perFile, o.VocabSize, blockCode, blockQuery, &st)
	perFile = nil
	c.summary = st
	printStats(c, time.Since(start))
	if len(c.vocab) == 0 {
		return fmt.Errorf("no terms in the corpus")
	}
	dim := o.Dim

	// Stage 1: the starting vectors, random rows of length InitScale
	// (near-orthogonal, so that exact matches stand out) plus SGMix times
	// the unit-length skip-gram vectors (related terms start close).
	t0 := time.Now()
	E := make([]float32, len(c.vocab)*dim)
	r := &rng{s: o.Seed}
	a := o.InitScale * math.Sqrt(3/float64(dim))
	for i := range E {
		E[i] = float32((2*r.float() - 1) * a)
	}
	if o.SG.Epochs > 0 && o.SGMix > 0 {
		S := loadOrTrainSGNS(c, dim, o.SG, o.Seed, o.SGCache)
		for i := 0; i < len(c.vocab); i++ {
			row := S[i*dim : (i+1)*dim]
			if n := vek32.Norm(row); n > 0 {
				axpy(E[i*dim:(i+1)*dim], row, float32(o.SGMix)/n)
			}
		}
	}
	log.Printf("skip-gram: %.0fs", time.Since(t0).Seconds())

	// Stage 2: contrastive tuning.
	t0 = time.Now()
	idf := idfWeights(c)
	p := &params{dim: dim, E: E, vocabLen: len(c.vocab),
		logWDoc: make([]float32, len(idf)), logWQry: make([]float32, len(idf)),
		gE: make([]float32, len(idf)), gWDoc: make([]float32, len(idf)), gWQry: make([]float32, len(idf))}
	for i, w := range idf {
		p.logWDoc[i] = float32(math.Log(float64(w)))
		p.logWQry[i] = p.logWDoc[i]
	}
	pairs := makePairs(c, o.Tune.MaxCode, float32(o.Tune.Head))
	var train, valid []pair
	for i, pr := range pairs {
		if i%40 == 7 && len(valid) < 2000 {
			valid = append(valid, pr)
		} else {
			train = append(train, pr)
		}
	}
	if o.Tune.Epochs > 0 && len(train) >= o.Tune.Batch {
		tune(p, train, valid, o.Tune, o.Seed, o.Workers)
	} else {
		log.Printf("no tuning; validation MRR@10 %.4f", validMRR(p, valid))
	}
	log.Printf("tuning: %.0fs", time.Since(t0).Seconds())

	m := assemble(c, p, o.Name, o.OOVScale)
	m.HeadWeight = float32(o.Tune.Head)
	m.Common = commonComponents(p, train, o.Common, o.Seed)
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		return err
	}
	if err := os.WriteFile(o.Out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	log.Printf("wrote %s (%.2f MB, %d terms x %d dims); total time %.0fs", o.Out, float64(buf.Len())/1e6, len(m.Vocab), m.Dim, time.Since(start).Seconds())
	if o.Eval > 0 {
		m2, err := tokvec.Read(buf.Bytes())
		if err != nil {
			return err
		}
		evaluate(m2, filepath.Join(o.GOROOT, "src"), o.Eval, o.ShowFailures)
	}
	return nil
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
func evaluate(m *tokvec.Model, root string, n, failures int) {
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
	if failures > 0 {
		showFailures(pairs, D, Q, B, failures)
	}
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
// installed packages, and the global node_modules directories, when
// present.
func defaultRoots() []string {
	var roots []string
	if out, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
		if p := strings.TrimSpace(string(out)); p != "" {
			roots = append(roots, p)
		}
	}
	// The Python standard library and the installed packages (purelib,
	// site-packages).
	if out, err := exec.Command("python3", "-c", "import sysconfig;p=sysconfig.get_paths();print(p['stdlib']);print(p['purelib'])").Output(); err == nil {
		for _, p := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if p = strings.TrimSpace(p); p != "" {
				roots = append(roots, p)
			}
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
