package files

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

var budgets = []Budget{
	{MaxTokens: 1000, CharsPerToken: 3}, // 3000 bytes, the smallest allowed
	{MaxTokens: 1000, CharsPerToken: 4},
	{MaxTokens: 5000, CharsPerToken: 4},  // the default, 20000 bytes
	{MaxTokens: 20000, CharsPerToken: 5}, // 100000 bytes, the largest allowed
}

// splitLines splits text into lines that keep their "\n".
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// expectedWalk is what a walk must return: every line once, except that a
// line longer than the budget keeps only its first maxChars bytes, cut on a
// rune boundary.
func expectedWalk(text string, maxChars int) string {
	if text == "" {
		return ""
	}
	var b strings.Builder
	for _, l := range splitLines(text) {
		if len(l) > maxChars {
			cut := maxChars
			for !utf8.RuneStart(l[cut]) {
				cut--
			}
			l = l[:cut]
		}
		b.WriteString(l)
	}
	return b.String()
}

// walk reads p from line 1 following NextOffset and checks every page's
// invariants. It returns the concatenated content and the pages.
func walk(t *testing.T, tr *Tree, p, text string, b Budget, limit int) (string, []*Page) {
	t.Helper()
	sum := sha256.Sum256([]byte(text))
	hash := hex.EncodeToString(sum[:])
	maxChars := b.MaxChars()
	totalLines := len(splitLines(text))
	var all strings.Builder
	var pages []*Page
	offset := 1
	for {
		pg, err := tr.Read(p, ReadOptions{Offset: offset, Limit: limit, Budget: b})
		if err != nil {
			t.Fatalf("Read(%q, offset %d): %v", p, offset, err)
		}
		pages = append(pages, pg)
		if len(pages) > totalLines+2 {
			t.Fatalf("walk does not end: %d pages for %d lines", len(pages), totalLines)
		}
		checkPage(t, pg, offset, limit, maxChars, totalLines, hash, b)
		all.WriteString(pg.Content)
		if pg.NextOffset == nil {
			return all.String(), pages
		}
		offset = *pg.NextOffset
	}
}

func checkPage(t *testing.T, pg *Page, offset, limit, maxChars, totalLines int, hash string, b Budget) {
	t.Helper()
	where := fmt.Sprintf("page at offset %d", offset)
	switch {
	case pg.Offset != offset:
		t.Fatalf("%s: Offset = %d", where, pg.Offset)
	case pg.TotalLines != totalLines:
		t.Fatalf("%s: TotalLines = %d, want %d", where, pg.TotalLines, totalLines)
	case pg.ContentHash != hash:
		t.Fatalf("%s: ContentHash = %s, want %s", where, pg.ContentHash, hash)
	case len(pg.Content) > maxChars:
		t.Fatalf("%s: %d bytes, budget %d", where, len(pg.Content), maxChars)
	case !utf8.ValidString(pg.Content):
		t.Fatalf("%s: content is not valid UTF-8 (a rune was split)", where)
	case pg.HasMore != (pg.NextOffset != nil) || pg.RequiresPagination != pg.HasMore:
		t.Fatalf("%s: HasMore %v, RequiresPagination %v, NextOffset %v", where, pg.HasMore, pg.RequiresPagination, pg.NextOffset)
	case pg.MaxTokensPerRequest != b.Normalize().MaxTokens:
		t.Fatalf("%s: MaxTokensPerRequest = %d", where, pg.MaxTokensPerRequest)
	}
	cpt := b.Normalize().CharsPerToken
	if want := (len(pg.Content) + cpt - 1) / cpt; pg.EstimatedTokens != want {
		t.Fatalf("%s: EstimatedTokens = %d, want %d", where, pg.EstimatedTokens, want)
	}
	if limit > 0 && (pg.Limit == nil || *pg.Limit != limit) || limit == 0 && pg.Limit != nil {
		t.Fatalf("%s: Limit = %v, want %d", where, pg.Limit, limit)
	}
	if limit > 0 && pg.ReturnedLines > limit {
		t.Fatalf("%s: %d lines, limit %d", where, pg.ReturnedLines, limit)
	}
	if pg.ReturnedLines == 0 {
		if pg.Content != "" || pg.NextOffset != nil {
			t.Fatalf("%s: no lines but content %q / next %v", where, pg.Content, pg.NextOffset)
		}
		return
	}
	last := offset + pg.ReturnedLines - 1
	if pg.NextOffset != nil && *pg.NextOffset != last+1 {
		t.Fatalf("%s: NextOffset = %d, want %d", where, *pg.NextOffset, last+1)
	}
	if (pg.NextOffset == nil) != (last == totalLines) {
		t.Fatalf("%s: NextOffset %v with last line %d of %d", where, pg.NextOffset, last, totalLines)
	}
	hint := ""
	if pg.PaginationHint != nil {
		hint = *pg.PaginationHint
	}
	switch {
	case pg.LineCut:
		if !pg.Truncated || pg.ReturnedLines != 1 || pg.TruncatedAtLine == nil || *pg.TruncatedAtLine != offset {
			t.Fatalf("%s: cut line: Truncated %v, lines %d, at %v", where, pg.Truncated, pg.ReturnedLines, pg.TruncatedAtLine)
		}
		prefix := fmt.Sprintf("Line %d is longer than the token budget; its first %d of ", offset, len(pg.Content))
		if !strings.HasPrefix(hint, prefix) {
			t.Fatalf("%s: hint %q, want prefix %q", where, hint, prefix)
		}
		if pg.NextOffset != nil && !strings.HasSuffix(hint, fmt.Sprintf(" bytes were returned. Use offset=%d to continue.", offset+1)) {
			t.Fatalf("%s: hint %q", where, hint)
		}
	case pg.Truncated:
		if pg.TruncatedAtLine == nil || *pg.TruncatedAtLine != last {
			t.Fatalf("%s: TruncatedAtLine = %v, want %d", where, pg.TruncatedAtLine, last)
		}
		want := fmt.Sprintf("Content truncated at line %d due to token limit. Use offset=%d to continue reading.", last, last+1)
		if hint != want {
			t.Fatalf("%s: hint %q, want %q", where, hint, want)
		}
		if !strings.HasSuffix(pg.Content, "\n") {
			t.Fatalf("%s: truncated page does not end at a line boundary", where)
		}
	case pg.NextOffset != nil:
		if pg.TruncatedAtLine != nil {
			t.Fatalf("%s: TruncatedAtLine set without truncation", where)
		}
		if want := fmt.Sprintf("More content available. Use offset=%d to continue reading.", last+1); hint != want {
			t.Fatalf("%s: hint %q, want %q", where, hint, want)
		}
	default:
		if pg.PaginationHint != nil || pg.TruncatedAtLine != nil {
			t.Fatalf("%s: at the end, hint %q, TruncatedAtLine %v", where, hint, pg.TruncatedAtLine)
		}
	}
}

func fiveThousandLines() string {
	var b strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&b, "line %d: %s\n", i, strings.Repeat("x", i%97))
	}
	return b.String()
}

func TestReadWalks(t *testing.T) {
	longLine := strings.Repeat("0123456789", 10_000) // 100 KB
	var multibyte strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&multibyte, "%d é日本語🙂%s\n", i, strings.Repeat("ü", i%50))
	}
	// One 30000-byte line of 3-byte runes: every budget cuts it, most mid-rune.
	multibyte.WriteString(strings.Repeat("日", 10_000) + "\n")
	multibyte.WriteString("après\n")

	cases := map[string]string{
		"five_thousand.txt":   fiveThousandLines(),
		"long_line.txt":       "first\nsecond\n" + longLine + "\nafter 1\nafter 2\n",
		"long_line_first.txt": longLine + "\nafter\n",
		"long_line_last.txt":  "before\n" + longLine,
		"no_newline.txt":      strings.Repeat("some line of text\n", 2000) + "the end, without newline",
		"one_line.txt":        "abc",
		"empty.txt":           "",
		"blank_lines.txt":     strings.Repeat("\n", 10_000),
		"multibyte.txt":       multibyte.String(),
	}
	_, tr := writeTree(t, cases)
	for name, text := range cases {
		for _, b := range budgets {
			for _, limit := range []int{0, 1, 7, 250, 100_000} {
				if limit == 1 && b != DefaultBudget {
					continue // one line per page does not depend on the budget; keep the test fast
				}
				t.Run(fmt.Sprintf("%s/%d*%d/limit%d", name, b.MaxTokens, b.CharsPerToken, limit), func(t *testing.T) {
					t.Parallel() // a Tree serves concurrent reads
					got, pages := walk(t, tr, name, text, b, limit)
					if want := expectedWalk(text, b.MaxChars()); got != want {
						t.Fatalf("concatenation differs from the file: got %d bytes, want %d", len(got), len(want))
					}
					lines := 0
					for _, pg := range pages {
						lines += pg.ReturnedLines
					}
					if want := pages[0].TotalLines; lines != want {
						t.Fatalf("returned %d lines in total, file has %d", lines, want)
					}
				})
			}
		}
	}
}

func TestReadWalkEqualsFile(t *testing.T) {
	// Without over-long lines the concatenation is the file, byte for byte.
	text := fiveThousandLines()
	_, tr := writeTree(t, map[string]string{"f.txt": text})
	for _, b := range budgets {
		got, pages := walk(t, tr, "f.txt", text, b, 0)
		if got != text {
			t.Fatalf("budget %v: concatenation differs from the file", b)
		}
		if len(pages) < 2 && b.MaxChars() < len(text) {
			t.Fatalf("budget %v: expected several pages, got %d", b, len(pages))
		}
	}
}

func TestReadFirstPage(t *testing.T) {
	text := fiveThousandLines()
	dir, tr := writeTree(t, map[string]string{"src/big.py": text})
	mtime := time.Date(2024, 1, 15, 10, 30, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "src/big.py"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	pg, err := tr.Read("./src//big.py", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lines := splitLines(text)
	// Whole lines while they fit in 20000 bytes.
	n, size := 0, 0
	for size+len(lines[n]) <= 20000 {
		size += len(lines[n])
		n++
	}
	if pg.Path != "src/big.py" || pg.Size != int64(len(text)) || !pg.ModifiedAt.Equal(mtime) ||
		pg.Language == nil || *pg.Language != "python" || pg.Offset != 1 || pg.Limit != nil {
		t.Fatalf("metadata: %+v", pg)
	}
	if pg.ReturnedLines != n || len(pg.Content) != size || !pg.Truncated || *pg.TruncatedAtLine != n || *pg.NextOffset != n+1 {
		t.Fatalf("got %d lines (%d bytes), truncated %v at %v, next %v; want %d lines (%d bytes)",
			pg.ReturnedLines, len(pg.Content), pg.Truncated, pg.TruncatedAtLine, pg.NextOffset, n, size)
	}
	want := fmt.Sprintf("Content truncated at line %d due to token limit. Use offset=%d to continue reading.", n, n+1)
	if *pg.PaginationHint != want {
		t.Fatalf("hint %q, want %q", *pg.PaginationHint, want)
	}
	if pg.EstimatedTokens != (size+3)/4 || pg.MaxTokensPerRequest != 5000 {
		t.Fatalf("tokens %d / %d", pg.EstimatedTokens, pg.MaxTokensPerRequest)
	}
}

func TestReadLimitSmallerThanBudget(t *testing.T) {
	text := fiveThousandLines()
	_, tr := writeTree(t, map[string]string{"f.txt": text})
	pg, err := tr.Read("f.txt", ReadOptions{Offset: 101, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	lines := splitLines(text)
	if want := strings.Join(lines[100:110], ""); pg.Content != want {
		t.Fatalf("content %q, want %q", pg.Content, want)
	}
	if pg.ReturnedLines != 10 || pg.Truncated || pg.TruncatedAtLine != nil || *pg.NextOffset != 111 || !pg.HasMore {
		t.Fatalf("page %+v", pg)
	}
	if want := "More content available. Use offset=111 to continue reading."; *pg.PaginationHint != want {
		t.Fatalf("hint %q", *pg.PaginationHint)
	}
	// The limit reaching the last line exactly: no more content.
	pg, err = tr.Read("f.txt", ReadOptions{Offset: 4991, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if pg.ReturnedLines != 10 || pg.HasMore || pg.NextOffset != nil || pg.PaginationHint != nil || pg.Truncated {
		t.Fatalf("last page %+v", pg)
	}
}

func TestReadLongLineHint(t *testing.T) {
	long := strings.Repeat("a", 100_000)
	_, tr := writeTree(t, map[string]string{
		"f.txt":    "one\ntwo\n" + long + "\nfour\n",
		"last.txt": "one\n" + long,
	})
	pg, err := tr.Read("f.txt", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pg.Content != "one\ntwo\n" || *pg.PaginationHint != "Content truncated at line 2 due to token limit. Use offset=3 to continue reading." {
		t.Fatalf("page 1: %q, hint %q", pg.Content, *pg.PaginationHint)
	}
	pg, err = tr.Read("f.txt", ReadOptions{Offset: 3})
	if err != nil {
		t.Fatal(err)
	}
	if pg.Content != long[:20000] || !pg.LineCut || !pg.Truncated || *pg.TruncatedAtLine != 3 || *pg.NextOffset != 4 {
		t.Fatalf("page 2: %d bytes, cut %v, truncated %v at %v, next %v", len(pg.Content), pg.LineCut, pg.Truncated, pg.TruncatedAtLine, pg.NextOffset)
	}
	if want := "Line 3 is longer than the token budget; its first 20000 of 100000 bytes were returned. Use offset=4 to continue."; *pg.PaginationHint != want {
		t.Fatalf("hint %q, want %q", *pg.PaginationHint, want)
	}
	// An over-long last line: nothing to continue to, but the cut is explained.
	pg, err = tr.Read("last.txt", ReadOptions{Offset: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !pg.LineCut || pg.HasMore || pg.NextOffset != nil ||
		*pg.PaginationHint != "Line 2 is longer than the token budget; its first 20000 of 100000 bytes were returned. It is the last line of the file." {
		t.Fatalf("last line page: %+v hint %v", pg, pg.PaginationHint)
	}
}

func TestReadOffsetBeyondEOF(t *testing.T) {
	text := "a\nb\nc\n"
	_, tr := writeTree(t, map[string]string{"f.txt": text, "empty.txt": ""})
	sum := sha256.Sum256([]byte(text))
	for _, off := range []int{4, 5, 1_000_000_000} {
		pg, err := tr.Read("f.txt", ReadOptions{Offset: off, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if pg.Content != "" || pg.ReturnedLines != 0 || pg.HasMore || pg.RequiresPagination || pg.NextOffset != nil ||
			pg.PaginationHint != nil || pg.Truncated || pg.TotalLines != 3 || pg.Offset != off || pg.EstimatedTokens != 0 {
			t.Fatalf("offset %d: %+v", off, pg)
		}
		if pg.ContentHash != hex.EncodeToString(sum[:]) {
			t.Fatalf("offset %d: hash %s", off, pg.ContentHash)
		}
	}
	pg, err := tr.Read("empty.txt", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pg.TotalLines != 0 || pg.ReturnedLines != 0 || pg.HasMore || pg.Content != "" ||
		pg.ContentHash != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("empty file: %+v", pg)
	}
}

func TestReadBadOptions(t *testing.T) {
	_, tr := writeTree(t, map[string]string{"f.txt": "x\n"})
	_, err := tr.Read("f.txt", ReadOptions{Offset: -1})
	wantError(t, err, CodeInvalidArgument, "offset must be an integer >= 1")
	_, err = tr.Read("f.txt", ReadOptions{Limit: -5})
	wantError(t, err, CodeInvalidArgument, "limit must be an integer >= 1")
}

func TestBudgetNormalize(t *testing.T) {
	for _, c := range []struct{ in, want Budget }{
		{Budget{}, Budget{5000, 4}},
		{Budget{MaxTokens: 10}, Budget{1000, 4}},
		{Budget{MaxTokens: 50_000, CharsPerToken: 9}, Budget{20000, 5}},
		{Budget{MaxTokens: 2000, CharsPerToken: 1}, Budget{2000, 3}},
	} {
		if got := c.in.Normalize(); got != c.want {
			t.Errorf("%v.Normalize() = %v, want %v", c.in, got, c.want)
		}
	}
	if got := (Budget{}).MaxChars(); got != 20000 {
		t.Errorf("default MaxChars = %d", got)
	}
}

func TestReadRefusals(t *testing.T) {
	dir, tr := writeTree(t, map[string]string{
		"src/main.go":   "package main\n",
		"image.png":     "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"latin1.txt":    "caf\xe9\n",
		"late_nul.txt":  strings.Repeat("a", 9000) + "\x00",
		"file.txt":      "x\n",
		".git/config":   "[remote \"origin\"]\n\turl = https://token@example.com/x.git\n",
		".git/HEAD":     "ref: refs/heads/main\n",
		"sub/.GIT/x":    "secret\n",
		"sub/inner.txt": "inner\n",
	})
	_, err := tr.Read("src/missing.go", ReadOptions{})
	wantError(t, err, CodeNotFound, `file not found: "src/missing.go"`, "list_files", "browse_directory")
	_, err = tr.Read("file.txt/x", ReadOptions{})
	wantError(t, err, CodeNotFound, "file not found")
	_, err = tr.Read("src", ReadOptions{})
	wantError(t, err, CodeNotAFile, `Not a file: "src"`)
	_, err = tr.Read("image.png", ReadOptions{})
	wantError(t, err, CodeBinary, `"image.png" is binary`, "cannot be shown as text")
	_, err = tr.Read("latin1.txt", ReadOptions{})
	wantError(t, err, CodeBinary, "binary (not UTF-8 text)")
	// A NUL byte past the first 8000 bytes is valid UTF-8: the file is text.
	if _, err := tr.Read("late_nul.txt", ReadOptions{}); err != nil {
		t.Errorf("late NUL: %v", err)
	}

	// A FIFO must be refused without opening it (open(2) would block).
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err == nil {
		done := make(chan error, 1)
		go func() { _, err := tr.Read("fifo", ReadOptions{}); done <- err }()
		select {
		case err := <-done:
			wantError(t, err, CodeNotAFile, "special file")
		case <-time.After(5 * time.Second):
			t.Fatal("reading a FIFO blocked")
		}
	}

	// Over MaxFileSize: a sparse file, cheap to create.
	f, err := os.Create(filepath.Join(dir, "huge.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = tr.Read("huge.txt", ReadOptions{})
	wantError(t, err, CodeTooLarge, `"huge.txt"`, "64 MiB")
}

func TestReadPathEscapes(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "x"), []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "repo")
	for p, c := range map[string]string{
		"src/main.go": "package main\n",
		".git/config": "[core]\n",
		"sub/.GIT/x":  "secret\n",
		"a/keep.txt":  "ok\n",
	} {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	symlink(t, dir, "passwd", "/etc/passwd")
	symlink(t, dir, "outdir", outside)                       // absolute, to a directory outside
	symlink(t, dir, "reloutdir", "../outside")               // relative, to a directory outside
	symlink(t, dir, "src/climb", "../../outside/secret.txt") // relative, climbing out
	symlink(t, dir, "gitcfg", ".git/config")                 // inside, but into .git
	symlink(t, dir, "gitdir", ".git")
	symlink(t, dir, "src/gitup", "../sub/.GIT/x")
	symlink(t, dir, "loop1", "loop2")
	symlink(t, dir, "loop2", "loop1")
	symlink(t, dir, "ok.go", "src/main.go") // inside: allowed
	symlink(t, dir, "srclink", "src")       // inside: allowed
	symlink(t, dir, "src/up.go", "../src/./main.go")
	tr, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()

	const leaves = "leaves the repository: use a path relative to the repository root"
	cases := []struct{ path, code, fragment string }{
		{"../x", CodeInvalidPath, `path "../x" ` + leaves},
		{"a/../../x", CodeInvalidPath, `path "a/../../x" ` + leaves},
		{"/etc/passwd", CodeInvalidPath, `path "/etc/passwd" is absolute: use a path relative to the repository root, e.g. "etc/passwd"`},
		{"a\x00b", CodeInvalidPath, `path "a\x00b" contains a NUL byte`},
		{strings.Repeat("a/", 2500), CodeInvalidPath, "path is 5000 bytes long; the limit is 4096 bytes"},
		{strings.Repeat("n", 256) + "/x", CodeInvalidPath, "is 256 bytes long; the limit is 255 bytes"},
		{`..\x`, CodeInvalidPath, `contains a backslash: separate directories with "/", e.g. "../x"`},
		{`src\main.go`, CodeInvalidPath, `e.g. "src/main.go"`},
		{"", CodeInvalidPath, "file path is empty"},
		{".", CodeInvalidPath, "names the repository root, not a file"},
		{".git/config", CodeInvalidPath, `path ".git/config" is inside the git metadata directory (.git)`},
		{"sub/.GIT/x", CodeInvalidPath, `path "sub/.GIT/x" is inside the git metadata directory`},
		{"src/../.Git/HEAD", CodeInvalidPath, "git metadata directory"},
		{"passwd", CodeInvalidPath, `path "passwd" is a symbolic link that leads outside the repository`},
		{"outdir/secret.txt", CodeInvalidPath, "leads outside the repository"},
		{"reloutdir/secret.txt", CodeInvalidPath, "leads outside the repository"},
		{"src/climb", CodeInvalidPath, "leads outside the repository"},
		{"gitcfg", CodeInvalidPath, `path "gitcfg" is inside the git metadata directory`},
		{"gitdir/config", CodeInvalidPath, "git metadata directory"},
		{"src/gitup", CodeInvalidPath, "git metadata directory"},
		{"loop1", CodeInvalidPath, "too many symbolic links"},
	}
	for _, c := range cases {
		t.Run(strings.ToValidUTF8(c.path[:min(len(c.path), 30)], "?"), func(t *testing.T) {
			pg, err := tr.Read(c.path, ReadOptions{})
			if err == nil {
				t.Fatalf("read %q: got %q, want an error", c.path, pg.Content)
			}
			wantError(t, err, c.code, c.fragment)
			if len(err.Error()) > 300 {
				t.Errorf("message is %d bytes long", len(err.Error()))
			}
		})
	}
	for _, p := range []string{"ok.go", "srclink/main.go", "src/up.go", "a/../src/main.go"} {
		pg, err := tr.Read(p, ReadOptions{})
		if err != nil || pg.Content != "package main\n" {
			t.Errorf("read %q: %v %+v", p, err, pg)
		}
	}
}

func TestCleanPath(t *testing.T) {
	for _, c := range []struct {
		in        string
		allowRoot bool
		want      string
	}{
		{"src/main.go", false, "src/main.go"},
		{"./src//main.go", false, "src/main.go"},
		{"src/", false, "src"},
		{"a/../b", false, "b"},
		{"", true, ""},
		{".", true, ""},
		{"/", true, ""},
		{"./", true, ""},
		{"a/..", true, ""},
		{".gitignore", false, ".gitignore"},
		{".github/x.yml", false, ".github/x.yml"},
		{"日本/語.txt", false, "日本/語.txt"},
	} {
		got, err := CleanPath(c.in, c.allowRoot)
		if err != nil || got != c.want {
			t.Errorf("CleanPath(%q, %v) = %q, %v; want %q", c.in, c.allowRoot, got, err, c.want)
		}
	}
	for _, in := range []string{"", "/", "../x", "/etc", "a/.git", ".GiT", "a\\b", "x\x00"} {
		if _, err := CleanPath(in, false); err == nil {
			t.Errorf("CleanPath(%q) accepted", in)
		}
	}
}

func TestLanguage(t *testing.T) {
	for p, want := range map[string]string{
		"a/b.py": "python", "x.GO": "go", "Makefile": "makefile", "sub/Dockerfile": "dockerfile",
		"Dockerfile.dev": "dockerfile", "c.h": "c", "c.hpp": "cpp", "r.yml": "yaml", "n.txt": "text",
		"s.zsh": "shell", "w.cmd": "batch", "k.kt": "kotlin", "m.md": "markdown", "e.conf": "config",
	} {
		if got := Language(p); got == nil || *got != want {
			t.Errorf("Language(%q) = %v, want %q", p, got, want)
		}
	}
	for _, p := range []string{"LICENSE", "a.unknown", "dir.py/README"} {
		if got := Language(p); got != nil {
			t.Errorf("Language(%q) = %q, want nil", p, *got)
		}
	}
}

func BenchmarkRead(b *testing.B) {
	for _, size := range []int{20 << 10, 200 << 10} {
		var text strings.Builder
		for i := 0; text.Len() < size; i++ {
			fmt.Fprintf(&text, "\tfmt.Println(%d, \"some typical line of source code\")\n", i)
		}
		_, tr := writeTree(b, map[string]string{"internal/pkg/sub/file.go": text.String()})
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(text.Len()))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tr.Read("internal/pkg/sub/file.go", ReadOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadFloor is the floor Read is measured against: os.ReadFile by
// absolute path plus the SHA-256 every page carries, with no path checks,
// line scanning or page building.
func BenchmarkReadFloor(b *testing.B) {
	for _, size := range []int{20 << 10, 200 << 10} {
		var text strings.Builder
		for i := 0; text.Len() < size; i++ {
			fmt.Fprintf(&text, "\tfmt.Println(%d, \"some typical line of source code\")\n", i)
		}
		dir, _ := writeTree(b, map[string]string{"internal/pkg/sub/file.go": text.String()})
		full := filepath.Join(dir, "internal/pkg/sub/file.go")
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(text.Len()))
			b.ReportAllocs()
			for b.Loop() {
				data, err := os.ReadFile(full)
				if err != nil {
					b.Fatal(err)
				}
				sha256.Sum256(data)
			}
		})
	}
}
