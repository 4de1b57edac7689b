package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyTree copies the Go, Python and JavaScript files under src to dst.
func copyTree(t *testing.T, src, dst string) int {
	n := 0
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		n++
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTrainDeterministic trains a tiny model twice on a copy of this
// repository's internal packages and checks that the files are identical,
// and that the manifest reproduces the corpus.
func TestTrainDeterministic(t *testing.T) {
	dir := t.TempDir()
	corpusDir := filepath.Join(dir, "corpus")
	if n := copyTree(t, "../../internal", corpusDir); n < 10 {
		t.Skip("not enough source files")
	}
	py := filepath.Join(corpusDir, "py", "lib.py")
	os.MkdirAll(filepath.Dir(py), 0o755)
	os.WriteFile(py, []byte("def read_config(path):\n    \"\"\"Read the configuration file at path.\"\"\"\n    with open(path) as f:\n        return f.read()\n"), 0o644)
	o := options{
		Roots: []string{corpusDir}, Sample: 1, MaxFile: 1 << 20, VocabSize: 3000, Dim: 32,
		Name: "test", Seed: 7, InitScale: 1, SGMix: 0.5, OOVScale: 0.7, Common: 1,
		Workers: 2, GOROOT: filepath.Join(dir, "no-goroot"),
		SG:   sgnsConfig{Epochs: 1, Contexts: 3, Negatives: 3, LR: 0.025, Subsample: 1e-3, MaxSpan: 100},
		Tune: tuneConfig{Epochs: 2, Batch: 32, MaxCode: 200, LR: 0.05, WeightLR: 0.05, Scale: 20, Head: 12, Local: 8},
	}
	var outs [][]byte
	for i := 0; i < 2; i++ {
		o.Out = filepath.Join(dir, "m"+string(rune('0'+i))+".bin")
		if i == 0 {
			o.ManifestOut = filepath.Join(dir, "corpus.txt")
		} else {
			o.ManifestIn, o.ManifestOut = filepath.Join(dir, "corpus.txt"), ""
		}
		if err := run(o); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(o.Out)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, data)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Fatal("two runs with the same seed and corpus produced different models")
	}
	man, _ := os.ReadFile(filepath.Join(dir, "corpus.txt"))
	if !strings.Contains(string(man), "# fingerprint ") || !strings.Contains(string(man), filepath.Join(corpusDir, "codetok")) {
		t.Fatalf("manifest:\n%s", man)
	}
}

func TestPackageRoot(t *testing.T) {
	for _, c := range []struct{ root, file, want string }{
		{"/m", "/m/github.com/a/b@v1.2.3/x/y.go", "/m/github.com/a/b@v1.2.3"},
		{"/py", "/py/json/decoder.py", "/py/json"},
		{"/py", "/py/argparse.py", "/py/argparse.py"},
		{"/n", "/n/npm/node_modules/@scope/pkg/lib/a.js", "/n/npm/node_modules/@scope/pkg"},
		{"/n", "/n/npm/node_modules/abbrev/lib/index.js", "/n/npm/node_modules/abbrev"},
		{"/n", "/n/npm/lib/cli.js", "/n/npm"},
	} {
		if got := packageRoot(c.root, c.file); got != c.want {
			t.Errorf("packageRoot(%q, %q) = %q, want %q", c.root, c.file, got, c.want)
		}
	}
}

func TestShuffleOrder(t *testing.T) {
	for _, local := range []int{0, 1, 7, 32} {
		order := make([]int, 100)
		shuffleOrder(order, local, &rng{s: 3})
		seen := map[int]bool{}
		for _, x := range order {
			if x < 0 || x >= 100 || seen[x] {
				t.Fatalf("local %d: not a permutation: %v", local, order)
			}
			seen[x] = true
		}
	}
}
