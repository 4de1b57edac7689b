package trigram

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var basicFiles = map[string]string{
	"main.go":              "package main\n\nimport \"io\"\n\nfunc main() {\n\tio.ReadFull(r, buf)\n}\n",
	"lib/util.go":          "package lib\n\n// ReadFull reads.\nfunc ReadFull() error { return nil }\nfunc readfull() {}\n",
	"lib/util_test.go":     "package lib\n\nfunc TestReadFull(t *testing.T) { ReadFull() }\n",
	"docs/README.md":       "# Title\nREADFULL in caps\nnothing here\n",
	"vendor/x/y.go":        "package y\nfunc ReadFull() {}\n",
	"a/b/c/deep.txt":       "deep ReadFull\n",
	"unicode.txt":          "caf\u00e9 na\u00efve\n\u00e9sync.Pool\nsync.Pool\n\u212Aelvin\n",
	"empty.txt":            "",
	"no-newline.txt":       "last line ReadFull",
	".hidden/h.go":         "package h // ReadFull\n",
	"lib/sub/more_test.go": "package sub\n",
}

func TestSearchBasics(t *testing.T) {
	ix, _ := buildIndex(t, basicFiles, BuildOptions{Shards: 4})
	if ix.NumDocs() != len(basicFiles) {
		t.Fatalf("NumDocs = %d, want %d", ix.NumDocs(), len(basicFiles))
	}
	res := search(t, ix, Query{Pattern: "ReadFull", Literal: true, CaseSensitive: true})
	want := []key{
		{".hidden/h.go", 1, 14},
		{"a/b/c/deep.txt", 1, 6},
		{"lib/util.go", 3, 4},
		{"lib/util.go", 4, 6},
		{"lib/util_test.go", 3, 10},
		{"main.go", 6, 5},
		{"no-newline.txt", 1, 11},
		{"vendor/x/y.go", 2, 6},
	}
	if got := keys(res); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	if res.TotalMatches != len(want) || res.Truncated {
		t.Errorf("total %d truncated %v", res.TotalMatches, res.Truncated)
	}
	if m := res.Matches[5]; m.LineContent != "\tio.ReadFull(r, buf)" {
		t.Errorf("line content %q", m.LineContent)
	}
	if m := res.Matches[6]; m.LineContent != "last line ReadFull" {
		t.Errorf("line content %q", m.LineContent)
	}

	// Case-insensitive finds READFULL and readfull too; one match per line.
	res = search(t, ix, Query{Pattern: "readfull", CaseSensitive: false})
	if res.TotalMatches != 10 {
		t.Errorf("-i: %d matches: %v", res.TotalMatches, keys(res))
	}
	// A regex: column is the first match on the line.
	res = search(t, ix, Query{Pattern: `func \w+\(`, CaseSensitive: true})
	if got := keys(res); len(got) != 5 || got[0] != (key{"lib/util.go", 4, 1}) {
		t.Errorf("regex: %v", got)
	}
	// Literal mode quotes metacharacters.
	res = search(t, ix, Query{Pattern: "ReadFull(r,", Literal: true, CaseSensitive: true})
	if got := keys(res); !reflect.DeepEqual(got, []key{{"main.go", 6, 5}}) {
		t.Errorf("literal: %v", got)
	}
	// Nothing.
	res = search(t, ix, Query{Pattern: "NoSuchThing", CaseSensitive: true})
	if len(res.Matches) != 0 || res.TotalMatches != 0 || res.FilesSearched != 0 {
		t.Errorf("no match: %+v", res)
	}
}

func TestNoPrefilterPatterns(t *testing.T) {
	ix, _ := buildIndex(t, basicFiles, BuildOptions{Shards: 3})
	// Patterns without a usable literal scan every file.
	for _, p := range []string{`.`, `^$`, `x*`, `\p{Lu}`, `[a-z]{2}\d?`} {
		q := Query{Pattern: p, CaseSensitive: true, MaxResults: 1000}
		res := search(t, ix, q)
		want := bruteForce(t, ix, q)
		if got := keys(res); !slices.Equal(got, want) || res.TotalMatches != len(want) || res.FilesSearched != len(basicFiles) {
			t.Errorf("%q: total %d, files %d\n%s", p, res.TotalMatches, res.FilesSearched, diffKeys(got, want))
		}
	}
	// No phantom empty line after the final newline, none in an empty file.
	if res := search(t, ix, Query{Pattern: `^$`, CaseSensitive: true}); res.TotalMatches != 4 {
		t.Errorf("^$: %v", keys(res))
	}
}

func TestUnicodeSemantics(t *testing.T) {
	ix, _ := buildIndex(t, map[string]string{
		"u.txt":   "caf\u00e9 na\u00efve\n\u00e9sync.Pool\nsync.Pool\n\u212Aelvin \u017Ftring\n\u0661\u0662\u0663\n",
		"bom.txt": "\ufefffoo bar\nfoo\n",
		"bad.txt": "caf\xe9 x\n",
		"nul.txt": strings.Repeat("pad\n", 3000) + "a\x00b foo\n",
	}, BuildOptions{Shards: 2})
	cases := []struct {
		q    Query
		want []key
	}{
		// \w is Unicode: é is a word character.
		{Query{Pattern: `caf\w\b`, CaseSensitive: true}, []key{{"u.txt", 1, 1}}},
		// \b is Unicode: no boundary between é and s.
		{Query{Pattern: `\bsync\.Pool`, CaseSensitive: true}, []key{{"u.txt", 3, 1}}},
		// (?i) folds k to the Kelvin sign and s to long s.
		{Query{Pattern: `kelvin`, CaseSensitive: false}, []key{{"u.txt", 4, 1}}},
		{Query{Pattern: `string`, CaseSensitive: false}, []key{{"u.txt", 4, 10}}},
		// \d is Unicode.
		{Query{Pattern: `\d\d\d`, CaseSensitive: true}, []key{{"u.txt", 5, 1}}},
		// The BOM is not part of line 1.
		{Query{Pattern: `^foo`, CaseSensitive: true}, []key{{"bom.txt", 1, 1}, {"bom.txt", 2, 1}}},
		// An invalid UTF-8 byte is matched by nothing, not even '.'.
		{Query{Pattern: `caf.`, CaseSensitive: true}, []key{{"u.txt", 1, 1}}},
		// A document with a NUL byte (kept beside zoekt) is searched.
		{Query{Pattern: `b foo`, CaseSensitive: true}, []key{{"nul.txt", 3001, 3}}},
	}
	for _, tc := range cases {
		got := keys(search(t, ix, tc.q))
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v: got %v, want %v", tc.q, got, tc.want)
		}
	}
	res := search(t, ix, Query{Pattern: "foo bar", CaseSensitive: true})
	if len(res.Matches) != 1 || res.Matches[0].LineContent != "foo bar" {
		t.Errorf("BOM line content: %+v", res.Matches)
	}
}

func TestInvalidPatterns(t *testing.T) {
	ix, _ := buildIndex(t, basicFiles, BuildOptions{Shards: 2})
	for _, p := range []string{`(`, `a[`, `x{2,1}`, `a\nb`, `[\n]`, `a|\n`, `\x{0A}x`, `(?P<n>a`, `\8`} {
		_, err := ix.Search(context.Background(), Query{Pattern: p, CaseSensitive: true})
		if !errors.Is(err, ErrInvalidPattern) {
			t.Errorf("%q: error %v, want ErrInvalidPattern", p, err)
		}
	}
	_, err := ix.Search(context.Background(), Query{Pattern: `(`, CaseSensitive: true})
	if err == nil || !strings.Contains(err.Error(), "missing closing )") {
		t.Errorf("error should quote the parser: %v", err)
	}
	// A class containing \n with other characters is fine, as in rg.
	if _, err := ix.Search(context.Background(), Query{Pattern: `[\nR]eadFull`, CaseSensitive: true}); err != nil {
		t.Errorf("[\\nR]: %v", err)
	}
	for _, g := range []string{"[abc", "{a,b", `x\`} {
		if _, err := ix.Search(context.Background(), Query{Pattern: "a", Include: []string{g}}); err == nil {
			t.Errorf("glob %q accepted", g)
		}
	}
	if _, err := ix.Search(context.Background(), Query{Pattern: "a", PathPrefix: "../x"}); err == nil {
		t.Errorf("path ../x accepted")
	}
}

func TestGlobsAndPathPrefix(t *testing.T) {
	files := map[string]string{}
	for _, p := range []string{"top.go", "src/main.go", "src/vendor/x/v.go", "vendor/w.go", "a/b/c/d.txt",
		"a/b/e.go", "a/x.md", ".hid/h.go", "src/Main.GO"} {
		files[p] = "needle\n"
	}
	ix, _ := buildIndex(t, files, BuildOptions{Shards: 3})
	// Expectations taken from ripgrep 13 on the same tree.
	cases := []struct {
		inc, exc []string
		prefix   string
		want     string
	}{
		{inc: []string{"*.go"}, want: ".hid/h.go a/b/e.go src/main.go src/vendor/x/v.go top.go vendor/w.go"},
		{exc: []string{"vendor"}, want: ".hid/h.go a/b/c/d.txt a/b/e.go a/x.md src/Main.GO src/main.go top.go"},
		{inc: []string{"vendor"}, want: ""},
		{inc: []string{"a/b"}, want: ""},
		{exc: []string{"a/b"}, want: ".hid/h.go a/x.md src/Main.GO src/main.go src/vendor/x/v.go top.go vendor/w.go"},
		{inc: []string{"b/*.go"}, want: ""},
		{inc: []string{"a/**/*.go"}, want: "a/b/e.go"},
		{inc: []string{"**/*.go"}, want: ".hid/h.go a/b/e.go src/main.go src/vendor/x/v.go top.go vendor/w.go"},
		{inc: []string{"/src/*.go"}, want: "src/main.go"},
		{inc: []string{"*.{go,md}"}, want: ".hid/h.go a/b/e.go a/x.md src/main.go src/vendor/x/v.go top.go vendor/w.go"},
		{exc: []string{"vendor/"}, want: ".hid/h.go a/b/c/d.txt a/b/e.go a/x.md src/Main.GO src/main.go top.go"},
		{inc: []string{"*.go"}, exc: []string{"src/**"}, want: ".hid/h.go a/b/e.go top.go vendor/w.go"},
		{inc: []string{"!src/**", "*.go"}, want: ".hid/h.go a/b/e.go src/main.go top.go vendor/w.go"},
		{inc: []string{"*.GO"}, want: "src/Main.GO"},
		{inc: []string{"a/*"}, want: "a/x.md"},
		{exc: []string{"a/*"}, want: ".hid/h.go src/Main.GO src/main.go src/vendor/x/v.go top.go vendor/w.go"},
		{inc: []string{"*/v.go"}, want: ""},
		{inc: []string{"v.go"}, want: "src/vendor/x/v.go"},
		{inc: []string{"[!t]*.go"}, want: ".hid/h.go a/b/e.go src/main.go src/vendor/x/v.go vendor/w.go"},
		{prefix: "src", want: "src/Main.GO src/main.go src/vendor/x/v.go"},
		{prefix: "./src/", inc: []string{"*.go"}, want: "src/main.go src/vendor/x/v.go"},
		{prefix: "a/x.md", want: "a/x.md"},
		{prefix: "sr", want: ""},
		{prefix: ".", want: ".hid/h.go a/b/c/d.txt a/b/e.go a/x.md src/Main.GO src/main.go src/vendor/x/v.go top.go vendor/w.go"},
	}
	for _, tc := range cases {
		res := search(t, ix, Query{Pattern: "needle", CaseSensitive: true, Include: tc.inc, Exclude: tc.exc, PathPrefix: tc.prefix})
		var got []string
		for _, m := range res.Matches {
			got = append(got, m.Path)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("inc %q exc %q prefix %q:\n got  %s\n want %s", tc.inc, tc.exc, tc.prefix, strings.Join(got, " "), tc.want)
		}
	}
}

func TestContextLines(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		if i == 3 || i == 5 || i == 12 || i == 20 {
			fmt.Fprintf(&b, "line %d MATCH\r\n", i)
		} else {
			fmt.Fprintf(&b, "line %d\r\n", i)
		}
	}
	ix, _ := buildIndex(t, map[string]string{"f.txt": b.String(), "g.txt": "MATCH\n"}, BuildOptions{Shards: 2})
	res := search(t, ix, Query{Pattern: "MATCH", CaseSensitive: true, ContextLines: 2})
	type ctx struct {
		line          int
		before, after []string
	}
	l := func(ns ...int) []string {
		var out []string
		for _, n := range ns {
			out = append(out, fmt.Sprintf("line %d", n))
		}
		return out
	}
	// Each context line once, as rg prints it: 4 belongs to line 3's After,
	// and line 5 has no Before left.
	want := []ctx{
		{3, l(1, 2), l(4)},
		{5, nil, l(6, 7)},
		{12, l(10, 11), l(13, 14)},
		{20, l(18, 19), nil},
		{1, nil, nil},
	}
	if len(res.Matches) != len(want) {
		t.Fatalf("matches %v", keys(res))
	}
	for i, w := range want {
		m := res.Matches[i]
		if m.Line != w.line || !reflect.DeepEqual(m.Before, w.before) || !reflect.DeepEqual(m.After, w.after) {
			t.Errorf("match %d: line %d before %q after %q; want %d %q %q", i, m.Line, m.Before, m.After, w.line, w.before, w.after)
		}
	}
	if res.Matches[0].LineContent != "line 3 MATCH" {
		t.Errorf("CRLF not stripped: %q", res.Matches[0].LineContent)
	}
	// With MaxResults the last returned match still stops its After at the
	// next (unreturned) match.
	res = search(t, ix, Query{Pattern: "MATCH", CaseSensitive: true, ContextLines: 3, MaxResults: 1})
	if m := res.Matches[0]; !reflect.DeepEqual(m.After, l(4)) || !res.Truncated || res.TotalMatches != 5 {
		t.Errorf("truncated context: %+v total %d", m, res.TotalMatches)
	}
}

func TestMaxResultsAndCountLimit(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 50; i++ {
		files[fmt.Sprintf("f%02d.txt", i)] = strings.Repeat("hit here\n", 10)
	}
	ix, _ := buildIndex(t, files, BuildOptions{Shards: 7})
	res := search(t, ix, Query{Pattern: "hit", CaseSensitive: true, MaxResults: 25})
	if len(res.Matches) != 25 || res.TotalMatches != 500 || !res.Truncated || res.CountLimited {
		t.Fatalf("got %d matches, total %d, truncated %v", len(res.Matches), res.TotalMatches, res.Truncated)
	}
	if m := res.Matches[24]; m.Path != "f02.txt" || m.Line != 5 {
		t.Errorf("not the first 25 in order: last is %s:%d", m.Path, m.Line)
	}
	res = search(t, ix, Query{Pattern: "hit", CaseSensitive: true})
	if len(res.Matches) != DefaultMaxResults {
		t.Errorf("default max results: %d", len(res.Matches))
	}
	// Counting stops at CountLimit, but the returned matches are still the
	// first ones.
	for i := 0; i < 5; i++ {
		res = search(t, ix, Query{Pattern: "hit", CaseSensitive: true, MaxResults: 15, CountLimit: 120})
		if !res.CountLimited || res.TotalMatches != 120 || !res.Truncated || len(res.Matches) != 15 ||
			res.Matches[14].Path != "f01.txt" || res.Matches[14].Line != 5 {
			t.Fatalf("count limit: %+v", res)
		}
	}
	// Exactly MaxResults matches: not truncated.
	res = search(t, ix, Query{Pattern: "hit", CaseSensitive: true, MaxResults: 500})
	if res.Truncated || len(res.Matches) != 500 {
		t.Errorf("exact fit: truncated %v, %d", res.Truncated, len(res.Matches))
	}
}

func TestSymbols(t *testing.T) {
	content := []byte("package p\n\nfunc Hello() {}\n\ntype HelloWorld struct{}\nfunc other() {}\n")
	off := func(s string) (int, int) {
		i := strings.Index(string(content), s)
		return i, i + len(s)
	}
	hs, he := off("Hello()")
	ws, we := off("HelloWorld")
	os_, oe := off("other")
	docs := []Doc{{Path: "p/p.go", Content: content, Symbols: []Symbol{
		{Name: "Hello", Kind: "function", StartOffset: hs, EndOffset: he - 2},
		{Name: "HelloWorld", Kind: "type", StartOffset: ws, EndOffset: we},
		{Name: "other", Kind: "function", StartOffset: os_, EndOffset: oe},
		{Name: "bad", Kind: "function", StartOffset: 5, EndOffset: 1000},        // dropped
		{Name: "overlap", Kind: "function", StartOffset: ws + 1, EndOffset: we}, // dropped
	}}}
	dir := filepath.Join(t.TempDir(), "idx")
	if err := Build(context.Background(), dir, docs, BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	hits, err := ix.Symbols(context.Background(), "^Hello", 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []SymbolHit{{"p/p.go", 3, "Hello", "function"}, {"p/p.go", 5, "HelloWorld", "type"}}
	if !reflect.DeepEqual(hits, want) {
		t.Errorf("got %+v", hits)
	}
	hits, _ = ix.Symbols(context.Background(), "(?i)^OTHER$", 10)
	if len(hits) != 1 || hits[0].Name != "other" || hits[0].Line != 6 {
		t.Errorf("case-insensitive: %+v", hits)
	}
	hits, _ = ix.Symbols(context.Background(), "l", 1)
	if len(hits) != 1 {
		t.Errorf("max: %+v", hits)
	}
	if _, err := ix.Symbols(context.Background(), "(", 1); !errors.Is(err, ErrInvalidPattern) {
		t.Errorf("invalid: %v", err)
	}
}

func TestBuildErrors(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "idx")
	if err := Build(ctx, dir, []Doc{{Path: "a"}, {Path: "a"}}, BuildOptions{}); err == nil {
		t.Error("duplicate path accepted")
	}
	for _, p := range []string{"", "/abs", "../x", "a/../b", "./a", "a//b", "."} {
		if err := Build(ctx, dir, []Doc{{Path: p}}, BuildOptions{}); err == nil {
			t.Errorf("path %q accepted", p)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 0 {
		t.Errorf("failed builds left %v behind", entries)
	}
	if err := Build(ctx, dir, nil, BuildOptions{}); err != nil {
		t.Fatalf("empty index: %v", err)
	}
	if err := Build(ctx, dir, nil, BuildOptions{}); err == nil {
		t.Error("existing dir overwritten")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := Build(cctx, dir+"2", []Doc{{Path: "a", Content: []byte("x")}}, BuildOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled build: %v", err)
	}
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if res := search(t, ix, Query{Pattern: "x"}); res.TotalMatches != 0 {
		t.Errorf("empty index matched")
	}
	ix.Close()
	if _, err := ix.Search(ctx, Query{Pattern: "x"}); !errors.Is(err, ErrClosed) {
		t.Errorf("search after close: %v", err)
	}
}

func TestUpdate(t *testing.T) {
	ctx := context.Background()
	const n = 8
	files := map[string]string{}
	for i := 0; i < 40; i++ {
		files[fmt.Sprintf("pkg%d/file%d.go", i%5, i)] = fmt.Sprintf("package p\n// file %d\nfunc F%d() {}\n", i, i)
	}
	// Documents with NUL bytes live in the .raw side files; make sure
	// there is one in an untouched shard and one in a rebuilt shard.
	for i := 0; i < 12; i++ {
		files[fmt.Sprintf("raw/r%d.bin", i)] = fmt.Sprintf("x\x00y\nRAWDOC %d\n", i)
	}
	_, oldDir := buildIndex(t, files, BuildOptions{Shards: n})

	// Change one file, remove one, add one.
	changedPath, removedPath, addedPath := "pkg1/file6.go", "pkg2/file7.go", "new/added.go"
	next := map[string]string{}
	for p, c := range files {
		next[p] = c
	}
	next[changedPath] = "package p\nfunc Changed() { ReadFull() }\n"
	delete(next, removedPath)
	next[addedPath] = "package n\nfunc Added() { ReadFull() }\n"
	next["raw/r3.bin"] = "x\x00y\nRAWDOC 3 changed\n"
	changed := []string{changedPath, removedPath, addedPath, "raw/r3.bin"}
	docsFor := func(s int) ([]Doc, error) {
		var ds []Doc
		for p, c := range next {
			if ShardOf(p, n) == s {
				ds = append(ds, Doc{Path: p, Content: []byte(c)})
			}
		}
		return ds, nil
	}
	newDir := filepath.Join(t.TempDir(), "idx2")
	// Without a delta shard: the touched shards are rebuilt.
	noDelta := BuildOptions{MaxDeltaBytes: -1}
	if err := Update(ctx, oldDir, newDir, Changes{Paths: changed, Shard: docsFor}, noDelta); err != nil {
		t.Fatal(err)
	}
	touched := map[int]bool{}
	for _, p := range changed {
		touched[ShardOf(p, n)] = true
	}
	linked := 0
	for s := 0; s < n; s++ {
		a, err1 := os.Stat(filepath.Join(oldDir, shardFile(s)))
		b, err2 := os.Stat(filepath.Join(newDir, shardFile(s)))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if same := os.SameFile(a, b); same == touched[s] {
			t.Errorf("shard %d: hard link %v, touched %v", s, same, touched[s])
		} else if same {
			linked++
		}
	}
	if linked == 0 {
		t.Errorf("no shard was reused")
	}

	nix, err := Open(newDir)
	if err != nil {
		t.Fatal(err)
	}
	defer nix.Close()
	if nix.NumDocs() != len(next) {
		t.Errorf("NumDocs %d, want %d", nix.NumDocs(), len(next))
	}
	got := keys(search(t, nix, Query{Pattern: `ReadFull`, CaseSensitive: true}))
	if !reflect.DeepEqual(got, []key{{addedPath, 2, 16}, {changedPath, 2, 18}}) {
		t.Errorf("after update: %v", got)
	}
	if res := search(t, nix, Query{Pattern: `F7\(`, CaseSensitive: true}); res.TotalMatches != 0 {
		t.Errorf("removed file still found")
	}
	if res := search(t, nix, Query{Pattern: `F6\(`, CaseSensitive: true}); res.TotalMatches != 0 {
		t.Errorf("old content still found")
	}
	if res := search(t, nix, Query{Pattern: `^func F\d+`, CaseSensitive: true, MaxResults: 100}); res.TotalMatches != 38 {
		t.Errorf("unchanged files: %d", res.TotalMatches)
	}
	if res := search(t, nix, Query{Pattern: `RAWDOC \d+`, CaseSensitive: true}); res.TotalMatches != 12 {
		t.Errorf("documents with NUL bytes: %d", res.TotalMatches)
	}
	// The old index is untouched.
	oix, err := Open(oldDir)
	if err != nil {
		t.Fatal(err)
	}
	defer oix.Close()
	if res := search(t, oix, Query{Pattern: `F7\(`, CaseSensitive: true}); res.TotalMatches != 1 {
		t.Errorf("old index changed")
	}

	// Misuse is reported.
	bad := func(s int) ([]Doc, error) {
		return []Doc{{Path: "zzz/not-here.go"}, {Path: "zzz/not-here2.go"}, {Path: "zzz/not-here3.go"}}, nil
	}
	if err := Update(ctx, oldDir, filepath.Join(t.TempDir(), "x"), Changes{Paths: []string{"a", "b", "c", "d"}, Shard: bad}, noDelta); err == nil {
		t.Error("docs of the wrong shard accepted")
	}
	if err := Update(ctx, oldDir, filepath.Join(t.TempDir(), "x2"), Changes{Paths: []string{"a"}, Docs: func([]string) ([]Doc, error) { return bad(0) }}, BuildOptions{}); err == nil {
		t.Error("delta docs that were not asked for accepted")
	}
	if err := Update(ctx, oldDir, newDir, Changes{Shard: docsFor}, BuildOptions{}); err == nil {
		t.Error("existing newDir overwritten")
	}
	if err := Update(ctx, oldDir, filepath.Join(t.TempDir(), "y"), Changes{Shard: docsFor}, BuildOptions{Shards: n + 1}); err == nil {
		t.Error("shard count change accepted")
	}
}

// A chain of updates through the delta shard (changes, removals, a file
// changed twice, removed then re-added, NUL documents), then folded back
// into the hash shards, answers exactly like a fresh build of the final
// documents, and links every hash shard while the delta is used.
func TestUpdateDeltaChain(t *testing.T) {
	ctx := context.Background()
	const n = 4
	files := map[string]string{}
	for i := 0; i < 60; i++ {
		files[fmt.Sprintf("pkg%d/file%d.go", i%6, i)] = fmt.Sprintf("package p\n// file %d\nfunc F%d() { ReadFull() }\n", i, i)
	}
	files["raw/a.bin"] = "x\x00y\nRAWDOC a ReadFull\n"
	_, dir := buildIndex(t, files, BuildOptions{Shards: n})
	steps := []map[string]*string{}
	str := func(s string) *string { return &s }
	steps = append(steps,
		map[string]*string{"pkg1/file1.go": str("package p\nfunc Changed1() { ReadFull() }\n"), "pkg2/file2.go": nil, "new/n1.go": str("package n\n// ReadFull twice ReadFull\n")},
		map[string]*string{"pkg1/file1.go": str("package p\nfunc Changed2() {}\n"), "new/n1.go": nil, "raw/a.bin": str("x\x00y\nRAWDOC b\n")},
		map[string]*string{"pkg2/file2.go": str("package p\nfunc Back() { ReadFull() }\n"), "pkg3/file3.go": nil},
	)
	queries := []Query{{Pattern: `ReadFull`, CaseSensitive: true, MaxResults: 1000}, {Pattern: `func \w+`, MaxResults: 1000}, {Pattern: `RAWDOC \w`, MaxResults: 10}}
	check := func(label, dir string, files map[string]string) {
		t.Helper()
		ix, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		want, _ := buildIndex(t, files, BuildOptions{Shards: n})
		if ix.NumDocs() != len(files) {
			t.Errorf("%s: NumDocs %d, want %d", label, ix.NumDocs(), len(files))
		}
		for _, q := range queries {
			if got, exp := keys(search(t, ix, q)), keys(search(t, want, q)); !reflect.DeepEqual(got, exp) {
				t.Errorf("%s: %s:\ngot  %v\nwant %v", label, q.Pattern, got, exp)
			}
		}
	}
	src := func(files map[string]string) Changes {
		return Changes{
			Shard: func(s int) ([]Doc, error) {
				var ds []Doc
				for p, c := range files {
					if ShardOf(p, n) == s {
						ds = append(ds, Doc{Path: p, Content: []byte(c)})
					}
				}
				return ds, nil
			},
			Docs: func(paths []string) ([]Doc, error) {
				var ds []Doc
				for _, p := range paths {
					if c, ok := files[p]; ok {
						ds = append(ds, Doc{Path: p, Content: []byte(c)})
					}
				}
				return ds, nil
			},
		}
	}
	for i, step := range steps {
		next := maps.Clone(files)
		ch := src(next)
		for p, c := range step {
			ch.Paths = append(ch.Paths, p)
			if c == nil {
				delete(next, p)
			} else {
				next[p] = *c
			}
		}
		newDir := filepath.Join(t.TempDir(), fmt.Sprintf("step%d", i))
		if err := Update(ctx, dir, newDir, ch, BuildOptions{}); err != nil {
			t.Fatal(err)
		}
		for s := 0; s < n; s++ {
			a, _ := os.Stat(filepath.Join(dir, shardFile(s)))
			b, _ := os.Stat(filepath.Join(newDir, shardFile(s)))
			if a == nil || b == nil || !os.SameFile(a, b) {
				t.Errorf("step %d: hash shard %d was not linked", i, s)
			}
		}
		check(fmt.Sprintf("step %d", i), newDir, next)
		files, dir = next, newDir
	}
	// A delta limit below the delta's size folds it back.
	folded := filepath.Join(t.TempDir(), "folded")
	ch := src(files)
	ch.Paths = []string{"pkg4/file4.go"}
	files["pkg4/file4.go"] = "package p\nfunc Folded() { ReadFull() }\n"
	if err := Update(ctx, dir, folded, ch, BuildOptions{MaxDeltaBytes: 10}); err != nil {
		t.Fatal(err)
	}
	m, err := readManifest(folded)
	if err != nil {
		t.Fatal(err)
	}
	if m.Delta != nil {
		t.Error("the delta was not folded back")
	}
	for s, sm := range m.Shards {
		if len(sm.Hidden) > 0 {
			t.Errorf("shard %d still hides %v", s, sm.Hidden)
		}
	}
	check("folded", folded, files)
}

func TestPrefilter(t *testing.T) {
	for _, tc := range []struct{ re, want string }{
		{`ReadFull`, `"ReadFull"`},
		{`func \w+Marshal\(`, `("func " "Marshal(")`},
		{`errors\.New\("[^"]*timeout`, `("errors.New(\"" "timeout")`},
		{`(?i)context deadline exceeded`, `i"context deadline exceeded"`},
		{`\bsync\.Pool\b`, `"sync.Pool"`},
		{`(?i)tls handshake`, `(i"tls handshake"|i"tls handſhake"|i"tlſ handshake"|i"tlſ handſhake")`},
		{`TODO\(\w+\)`, `"TODO("`},
		{`colou?r`, `("color"|"colour")`},
		{`(foo|bar)baz`, `("barbaz"|"foobaz")`},
		{`.*`, `true`},
		{`ab`, `true`},
		{`(?i)string`, `(i"string"|i"ſtring")`},
		{`(?i)ssssss`, `(i"sss"|i"ssſ"|i"sſs"|i"sſſ"|i"ſss"|i"ſsſ"|i"ſſs"|i"ſſſ")`},
		{`abc|.`, `true`},
		{`[^\s\S]`, `false`},
		{`x{3}yz`, `"xxxyz"`},
	} {
		m, err := compilePattern(tc.re, false, true)
		if err != nil {
			t.Fatal(err)
		}
		if got := prefilter(m.syn).String(); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.re, got, tc.want)
		}
	}
}

// TestPrefilterNeverMisses compares indexed search with a scan of every
// file, for random patterns over a small alphabet, where accidental
// substrings, case variants and alternations are frequent.
func TestPrefilterNeverMisses(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []string{"a", "b", "c", "A", "B", "k", "K", "\u212A", "s", "\u017F", " ", "é", "É", "_", "1", "\t", "σ", "ς", "Σ", "\xff", "\xc3"}
	files := map[string]string{}
	for i := 0; i < 60; i++ {
		var b strings.Builder
		for l := 0; l < 20; l++ {
			for c := rng.Intn(12); c > 0; c-- {
				b.WriteString(alphabet[rng.Intn(len(alphabet))])
			}
			b.WriteByte('\n')
		}
		files[fmt.Sprintf("d%d/f%d.txt", i%4, i)] = b.String()
	}
	ix, _ := buildIndex(t, files, BuildOptions{Shards: 5})
	atoms := []string{"a", "b", "c", "k", "s", "é", "σ", `\w`, `\s`, `.`, `[ab]`, `[^a]`, `\b`, `^`, `$`, `(?i:k)`, "ab", "abc", "kab", "ssa", "σσ"}
	var gen func(depth int) string
	gen = func(depth int) string {
		if depth == 0 {
			return atoms[rng.Intn(len(atoms))]
		}
		switch rng.Intn(7) {
		case 0:
			return gen(depth-1) + "|" + gen(depth-1)
		case 1:
			return "(" + gen(depth-1) + ")" + []string{"*", "+", "?", "{2}", "{1,3}"}[rng.Intn(5)]
		default:
			return gen(depth-1) + gen(depth-1)
		}
	}
	for i := 0; i < 400; i++ {
		q := Query{Pattern: gen(3), CaseSensitive: rng.Intn(2) == 0, MaxResults: 1 << 20}
		res, err := ix.Search(context.Background(), q)
		if err != nil {
			t.Fatalf("%q: %v", q.Pattern, err)
		}
		want := bruteForce(t, ix, q)
		if got := keys(res); !slices.Equal(got, want) {
			t.Fatalf("%q (case %v): prefilter %s\n%s", q.Pattern, q.CaseSensitive,
				func() string {
					m, _ := compilePattern(q.Pattern, false, q.CaseSensitive)
					return prefilter(m.syn).String()
				}(),
				diffKeys(got, want))
		}
	}
}

// bruteForce scans every document without any prefilter.
func bruteForce(t *testing.T, ix *Index, q Query) []key {
	m, err := compilePattern(q.Pattern, q.Literal, q.CaseSensitive)
	if err != nil {
		t.Fatal(err)
	}
	sc := newScanner(m, nil, false)
	sc.noDFA = true // independent of the DFA, which Search uses without literals
	var all []doc
	for _, sh := range ix.shards {
		all = append(all, sh.docs...)
		all = append(all, sh.raw...)
	}
	slices.SortFunc(all, func(a, b doc) int { return strings.Compare(a.path, b.path) })
	var out []key
	for _, d := range all {
		for _, h := range sc.scan(text(d.content), 1<<30).hits {
			out = append(out, key{d.path, h.line, h.col + 1})
		}
	}
	return out
}
