package codetok

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

func TestTerms(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"HTTPServerError2", []string{"http", "server", "error"}},
		{"readFile", []string{"read", "file"}},
		{"ReadFile reads the named file and returns the contents.", []string{"read", "file", "read", "named", "file", "content"}},
		{"snake_case_name", []string{"snake", "case", "name"}},
		{"utf8.DecodeRune UTF-8 UTF8", []string{"utf", "decode", "rune", "utf", "utf"}},
		{"sha256.Sum256 SHA-256", []string{"sha", "256", "sum", "256", "sha", "256"}},
		{"int64 base64", []string{"int", "64", "base", "64"}},
		{"XMLHttpRequest", []string{"xml", "http", "request"}},
		{"getIDs IDs", []string{"get", "id", "id"}},
		{"func (s *Server) Close() error { return nil }", []string{"server", "close", "error"}},
		{"def __init__(self, x):", []string{"init"}},
		{"entries classes indexes matches statuses aliases caches", []string{"entry", "class", "index", "match", "status", "alias", "cache"}},
		{"status analysis process has its bus", []string{"status", "analysis", "process", "bus"}},
		{"Größe überprüfenDatei", []string{"größe", "überprüfen", "datei"}},
		{"a b c 1 2 3 x9", nil},
		{"deadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeef ok", []string{"ok"}},
		{"", nil},
	}
	for _, c := range cases {
		got := Terms(c.in)
		if len(got) == 0 && len(c.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Terms(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestURLsPlural(t *testing.T) {
	// An acronym followed by a plural "s" stays one word; the next hump
	// starts a new word.
	got := Terms("parseURLsFromIDs")
	want := []string{"parse", "url", "id"} // "from" is a stopword
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q want %q", got, want)
	}
	if got := Terms("MyURLs"); !reflect.DeepEqual(got, []string{"url"}) {
		t.Fatalf("MyURLs: %q", got) // "my" is a stopword
	}
}

func TestStem(t *testing.T) {
	for in, want := range map[string]string{
		"files": "file", "returns": "return", "entries": "entry", "ties": "tie",
		"classes": "class", "class": "class", "boxes": "box", "hashes": "hash",
		"matches": "match", "cases": "case", "uses": "use", "bytes": "byte",
		"keys": "key", "https": "http", "args": "arg", "ids": "id",
		"bus": "bus", "has": "has", "status": "status", "alias": "alias",
		"areas": "area", "news": "news", "s": "s", "": "",
	} {
		if got := Stem(in); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStopwords(t *testing.T) {
	for _, w := range Stopwords() {
		if w != strings.ToLower(w) || len(w) < 2 {
			t.Errorf("bad stopword %q", w)
		}
		if !IsStopword(w) {
			t.Errorf("IsStopword(%q) = false", w)
		}
		if len(Terms(w)) != 0 {
			t.Errorf("Terms(%q) = %q", w, Terms(w))
		}
	}
	if IsStopword("error") || IsStopword("string") {
		t.Error("meaningful words must not be stopwords")
	}
}

// TestUnicodeMatchesASCII checks that the Unicode slow path splits like the
// ASCII fast path.
func TestUnicodeMatchesASCII(t *testing.T) {
	for _, s := range []string{"HTTPServerError2", "parseURLsFromIDs", "snake_case", "int64Value", "XMLHttpRequest"} {
		want := Terms(s)
		got := Terms(s + "é")
		got2 := Terms("é" + s)
		// The accented letter attaches to the last/first sub-word.
		if len(got) != len(want) || len(got2) != len(want) {
			t.Errorf("%q: ascii %q, unicode %q / %q", s, want, got, got2)
		}
	}
}

func TestDeterministicAndValid(t *testing.T) {
	src := sampleSource(t, 2<<20)
	a, b := Terms(src), Terms(src)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("not deterministic")
	}
	for _, w := range a {
		if len(w) < 2 || len(w) > MaxTermLen || w != strings.ToLower(w) || strings.ContainsAny(w, " \t\n_.-\"") {
			t.Fatalf("bad term %q", w)
		}
	}
}

func FuzzTerms(f *testing.F) {
	f.Add("HTTPServerError2 readFile ÜberGröße 日本語テキスト")
	f.Fuzz(func(t *testing.T, s string) {
		for _, w := range Terms(s) {
			if len(w) < 2 || IsStopword(w) {
				t.Fatalf("bad term %q from %q", w, s)
			}
		}
	})
}

// sampleSource returns up to n bytes of Go source from GOROOT (or a
// synthetic text when GOROOT is absent).
func sampleSource(tb testing.TB, n int) string {
	var sb strings.Builder
	root := filepath.Join(runtime.GOROOT(), "src", "net", "http")
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || sb.Len() >= n {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".go") {
			b, err := os.ReadFile(p)
			if err == nil {
				sb.Write(b)
			}
		}
		return nil
	})
	for sb.Len() < n {
		sb.WriteString("// ReadFile reads the named file and returns the contents.\nfunc ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }\n")
	}
	return sb.String()[:n]
}

func BenchmarkTerms(b *testing.B) {
	src := sampleSource(b, 4<<20)
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	var dst []string
	for i := 0; i < b.N; i++ {
		dst = AppendTerms(dst[:0], src)
	}
}

func BenchmarkScan(b *testing.B) {
	src := sampleSource(b, 4<<20)
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	var s Scanner
	n := 0
	for i := 0; i < b.N; i++ {
		s.Scan(src, func(t []byte) { n += len(t) })
	}
}
