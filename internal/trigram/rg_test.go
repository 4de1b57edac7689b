package trigram

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// rgCorpusDirs is a slice of GOROOT/src with a few hundred files, testdata
// included on purpose: it holds odd encodings, long lines and CRLF files.
var rgCorpusDirs = []string{"bufio", "bytes", "strings", "io", "encoding", "regexp", "unicode",
	"sync", "context", "errors", "sort", "html", "mime", "text"}

// edgeDocs are synthetic files for the places where Go's regexp and
// ripgrep's differ or where line handling is subtle.
var edgeDocs = []Doc{
	{Path: "edge/bom.txt", Content: []byte("\xef\xbb\xbffoo bar\nfoo\n")},
	{Path: "edge/crlf.txt", Content: []byte("foo\r\nbar baz\r\n\r\nend")},
	{Path: "edge/empty.txt", Content: nil},
	{Path: "edge/nonl.txt", Content: []byte("no trailing newline foo")},
	{Path: "edge/blank.txt", Content: []byte("\n\n\n")},
	{Path: "edge/kelvin.txt", Content: []byte("Kelvin \u212Aey here\nlong \u017Ftring\nSIGMA \u03a3 \u03c3 \u03c2 end\nmicro \u00b5 \u03bc\n")},
	{Path: "edge/words.txt", Content: []byte("\u00e9sync.Pool \u00e9\nna\u00efve caf\u00e9 \u0661\u0662\u0663 x\u00a0y\n_sync.Pool\nsync.Pool\u00e9\n\u00e9err err\u00e9 err\n")},
	{Path: "edge/latin1.txt", Content: []byte("caf\xe9 x\ncaf\xc3\xa9 y\nfoo\xffbar\n\xff\xfe\n")},
	{Path: "edge/late-nul.txt", Content: append(bytes.Repeat([]byte("padding line\n"), 700), []byte("foo\x00bar ReadFull\nsync.Pool after nul\n")...)},
	{Path: "edge/space.txt", Content: []byte("a\u2003b\tc\u3000d\ve\n")},
	{Path: "edge/deep/dir/file.go", Content: []byte("package dir\n\nfunc ReadFull() {}\n")},
}

func loadGoCorpus(t testing.TB, dirs []string) []Doc {
	t.Helper()
	root := filepath.Join(runtime.GOROOT(), "src")
	var docs []Doc
	for _, d := range dirs {
		err := filepath.WalkDir(filepath.Join(root, d), func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !e.Type().IsRegular() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			// The indexer's rules: no binaries (NUL in the first 8000
			// bytes), nothing over 1 MiB.
			if len(b) > 1<<20 || bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			docs = append(docs, Doc{Path: filepath.ToSlash(rel), Content: b})
			return nil
		})
		if err != nil {
			t.Skipf("GOROOT source not available: %v", err)
		}
	}
	return docs
}

// rgQueries are compared against ripgrep on the corpus.
var rgQueries = []Query{
	{Pattern: "ReadFull", CaseSensitive: true},
	{Pattern: `func \w+\(`, CaseSensitive: true},
	{Pattern: `^func `, CaseSensitive: true},
	{Pattern: `\berr\b`, CaseSensitive: true},
	{Pattern: `utf-?8`, CaseSensitive: false},
	{Pattern: `[A-Z][a-z]+Error\b`, CaseSensitive: true},
	{Pattern: `io\.EOF|io\.ErrUnexpectedEOF`, CaseSensitive: true},
	{Pattern: `\d{4,}`, CaseSensitive: true},
	{Pattern: `TODO|FIXME|XXX`, CaseSensitive: true},
	{Pattern: `return\s+nil,\s*err$`, CaseSensitive: true},
	{Pattern: `^\s*//\s*Deprecated:`, CaseSensitive: true},
	{Pattern: `\bb(yte)?s\.Buffer\b`, CaseSensitive: true},
	{Pattern: `[^\x00-\x7F]`, CaseSensitive: true},
	{Pattern: `é|ü|ñ`, CaseSensitive: true},
	{Pattern: `\p{Greek}+`, CaseSensitive: true},
	{Pattern: `σ`, CaseSensitive: false},
	{Pattern: `colou?r`, CaseSensitive: true},
	{Pattern: `\.\.\.`, CaseSensitive: true},
	{Pattern: `^$`, CaseSensitive: true},
	{Pattern: `x*`, CaseSensitive: true},
	{Pattern: `.`, CaseSensitive: true},
	{Pattern: `\t\t\treturn`, CaseSensitive: true},
	{Pattern: `case '[a-z]':`, CaseSensitive: true},
	{Pattern: `kelvin|string`, CaseSensitive: false},
	{Pattern: `0x[0-9a-fA-F]{8}`, CaseSensitive: true},
	{Pattern: `\w+_test\.go`, CaseSensitive: true},
	{Pattern: `(Read|Write)(At|String|Byte)\(`, CaseSensitive: true},
	{Pattern: `[[:upper:]]{3,}`, CaseSensitive: true},
	{Pattern: `\Bing\b`, CaseSensitive: true},
	{Pattern: `ſtring`, CaseSensitive: false},
	{Pattern: `strings\.builder`, CaseSensitive: false},
	{Pattern: `NewReader`, CaseSensitive: false},
	{Pattern: `Buffer)`, Literal: true, CaseSensitive: true},
	{Pattern: `a.b(`, Literal: true, CaseSensitive: false},
	{Pattern: `\S+\s+\S+=`, CaseSensitive: true},
	{Pattern: `"[^"]*\\n"`, CaseSensitive: true},
	{Pattern: `^\p{Lu}`, CaseSensitive: true},
	{Pattern: `\w+é`, CaseSensitive: true},
	{Pattern: `\bsync\.Pool\b`, CaseSensitive: true},
	{Pattern: `caf.`, CaseSensitive: true},
	{Pattern: `caf\W`, CaseSensitive: true},
	{Pattern: `foo$`, CaseSensitive: true},
	{Pattern: `\Afoo`, CaseSensitive: true},
	{Pattern: `bar\z`, CaseSensitive: true},
	{Pattern: `\s\w\s`, CaseSensitive: true},
	{Pattern: `[\nf]oo`, CaseSensitive: true},
	{Pattern: `(?i)sigma [σς]`, CaseSensitive: true},
	{Pattern: `\bkey\b`, CaseSensitive: false},
	{Pattern: `err\b`, CaseSensitive: true},
	{Pattern: `key here`, CaseSensitive: false},
	{Pattern: `long string`, CaseSensitive: false},
	{Pattern: `sigma σ σ σ end`, CaseSensitive: false},
	{Pattern: `micro μ μ`, CaseSensitive: false},
	{Pattern: `ReadFull`, CaseSensitive: true, PathPrefix: "edge"},
	{Pattern: `ReadFull`, CaseSensitive: true, Include: []string{"*.go"}, Exclude: []string{"*_test.go"}},
	{Pattern: `Marshal`, CaseSensitive: true, Include: []string{"encoding/**/*.go"}},
	{Pattern: `func`, CaseSensitive: true, Exclude: []string{"testdata", "encoding/*"}},
	{Pattern: `Decode`, CaseSensitive: true, Include: []string{"*.{go,txt}", "!*_test.go"}},
	{Pattern: `Unmarshal`, CaseSensitive: true, PathPrefix: "encoding/json"},
}

func TestMatchesRipgrep(t *testing.T) {
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("ripgrep (rg) not installed")
	}
	docs := append(loadGoCorpus(t, rgCorpusDirs), edgeDocs...)
	if len(docs) < 300 {
		t.Fatalf("corpus too small: %d files", len(docs))
	}
	tree := t.TempDir()
	writeCorpus(t, tree, docs)
	dir := filepath.Join(t.TempDir(), "idx")
	if err := Build(context.Background(), dir, docs, BuildOptions{Shards: 8}); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	t.Logf("corpus: %d files", len(docs))

	for _, q := range rgQueries {
		name := q.Pattern
		if !q.CaseSensitive {
			name = "-i " + name
		}
		t.Run(name, func(t *testing.T) {
			want, ok := runRg(t, tree, q)
			if !ok {
				t.Fatalf("rg failed for %+v", q)
			}
			q.MaxResults, q.CountLimit = 1<<30, 1<<30
			res, err := ix.Search(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			got := keys(res)
			if res.TotalMatches != len(want) || len(got) != len(want) || diffKeys(got, want) != "" {
				t.Errorf("%+v: got %d matches (total %d), rg %d\n%s", q, len(got), res.TotalMatches, len(want), diffKeys(got, want))
			}
			if testing.Verbose() {
				t.Logf("%d matches, %d files scanned", len(got), res.FilesSearched)
			}
		})
	}
}

// TestRipgrepRejectsLikeUs checks that patterns ripgrep refuses without -U
// are refused here too.
func TestRipgrepRejectsLikeUs(t *testing.T) {
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("ripgrep (rg) not installed")
	}
	tree := t.TempDir()
	writeCorpus(t, tree, []Doc{{Path: "a.txt", Content: []byte("a\nb\n")}})
	ix, _ := buildIndex(t, map[string]string{"a.txt": "a\nb\n"}, BuildOptions{})
	for _, p := range []string{`a\nb`, `[\n]`, `\x0A`, `a|\n`, `o\n?`, "a\nb"} {
		q := Query{Pattern: p, CaseSensitive: true}
		_, rgOK := runRg(t, tree, q)
		_, err := ix.Search(context.Background(), q)
		if rgOK || err == nil || !strings.Contains(err.Error(), `'\n' is not allowed`) {
			t.Errorf("%q: rg ok=%v, our error %v", p, rgOK, err)
		}
	}
}
