package trigram

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// buildIndex builds an index of files (path -> content) and opens it.
func buildIndex(t testing.TB, files map[string]string, o BuildOptions) (*Index, string) {
	t.Helper()
	var docs []Doc
	for p, c := range files {
		docs = append(docs, Doc{Path: p, Content: []byte(c)})
	}
	dir := filepath.Join(t.TempDir(), "idx")
	if err := Build(context.Background(), dir, docs, o); err != nil {
		t.Fatalf("Build: %v", err)
	}
	ix, err := Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix, dir
}

func search(t testing.TB, ix *Index, q Query) *Result {
	t.Helper()
	res, err := ix.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	return res
}

// key is what the ripgrep comparison looks at.
type key struct {
	Path      string
	Line, Col int
}

func (k key) String() string { return fmt.Sprintf("%s:%d:%d", k.Path, k.Line, k.Col) }

func keys(res *Result) []key {
	out := make([]key, len(res.Matches))
	for i, m := range res.Matches {
		out[i] = key{m.Path, m.Line, m.Column}
	}
	return out
}

func writeCorpus(t testing.TB, dir string, docs []Doc) {
	t.Helper()
	for _, d := range docs {
		p := filepath.Join(dir, filepath.FromSlash(d.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, d.Content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// rgArgs is the ripgrep command line equivalent to q: nothing filtered by
// rg itself (-uuu, -a), one line per matching line with the first match's
// column.
func rgArgs(q Query) []string {
	args := []string{"--no-config", "-uuu", "-a", "-n", "--column", "--null", "--no-heading", "--color=never"}
	if !q.CaseSensitive {
		args = append(args, "-i")
	}
	if q.Literal {
		args = append(args, "-F")
	}
	for _, g := range q.Include {
		args = append(args, "-g", g)
	}
	for _, g := range q.Exclude {
		args = append(args, "-g", "!"+g)
	}
	args = append(args, "-e", q.Pattern, "--")
	if q.PathPrefix != "" {
		args = append(args, q.PathPrefix)
	} else {
		args = append(args, ".")
	}
	return args
}

// runRg runs ripgrep in dir and returns the sorted (path, line, column)
// set. ok is false when rg reported an error.
func runRg(t testing.TB, dir string, q Query) (ks []key, ok bool) {
	t.Helper()
	cmd := exec.Command("rg", rgArgs(q)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ee, isExit := err.(*exec.ExitError); isExit && ee.ExitCode() == 1 {
			return nil, true // no match
		}
		return nil, false
	}
	ks, perr := parseRg(out)
	if perr != nil {
		t.Fatalf("parsing rg output: %v", perr)
	}
	return ks, true
}

func parseRg(out []byte) ([]key, error) {
	var ks []key
	for _, line := range bytes.Split(out, []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		nul := bytes.IndexByte(line, 0)
		if nul < 0 {
			return nil, fmt.Errorf("no NUL in %q", line)
		}
		p := strings.TrimPrefix(string(line[:nul]), "./")
		rest := string(line[nul+1:])
		parts := strings.SplitN(rest, ":", 3)
		if len(parts) < 2 {
			return nil, fmt.Errorf("bad line %q", line)
		}
		ln, err1 := strconv.Atoi(parts[0])
		col, err2 := strconv.Atoi(parts[1])
		if err1 != nil {
			return nil, fmt.Errorf("bad line %q", line)
		}
		if err2 != nil || len(parts) < 3 {
			// ripgrep 13 prints no column when it cannot re-find the match
			// inside the line (seen with \A); rg --json then has no
			// submatch and the tool reports column 1.
			col = 1
		}
		ks = append(ks, key{p, ln, col})
	}
	sort.Slice(ks, func(i, j int) bool {
		a, b := ks[i], ks[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Line < b.Line
	})
	return ks, nil
}

// diffKeys describes the first differences between two sorted key lists.
func diffKeys(got, want []key) string {
	g := map[key]bool{}
	for _, k := range got {
		g[k] = true
	}
	w := map[key]bool{}
	for _, k := range want {
		w[k] = true
	}
	var b strings.Builder
	n := 0
	for _, k := range want {
		if !g[k] && n < 10 {
			fmt.Fprintf(&b, "  missing %s\n", k)
			n++
		}
	}
	for _, k := range got {
		if !w[k] && n < 20 {
			fmt.Fprintf(&b, "  extra   %s\n", k)
			n++
		}
	}
	return b.String()
}
