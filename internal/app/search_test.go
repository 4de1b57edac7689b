package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cidx/cidx/internal/app"
	"github.com/cidx/cidx/internal/auth"
	"github.com/cidx/cidx/internal/index"
	"github.com/cidx/cidx/internal/jobs"
	"github.com/cidx/cidx/internal/search"
	"github.com/cidx/cidx/internal/testutil"
)

func results(t *testing.T, out map[string]any) []map[string]any {
	t.Helper()
	r := out["results"].(map[string]any)
	var hits []map[string]any
	list, _ := r["results"].([]any)
	for _, h := range list {
		hits = append(hits, h.(map[string]any))
	}
	return hits
}

func TestSearchCodeModesAndFilters(t *testing.T) {
	e := setup(t)
	cs := e.connect(t, auth.NormalUser, "")
	for _, mode := range []string{"fts", "semantic", "hybrid"} {
		out := mustCall(t, cs, "search_code", map[string]any{"query_text": "hello returns hi", "repository_alias": "demo-global", "search_mode": mode})
		hits := results(t, out)
		if len(hits) == 0 {
			t.Fatalf("%s: no results: %v", mode, out)
		}
		if hits[0]["file_path"] != "src/app.py" {
			t.Errorf("%s: top hit %v, want src/app.py", mode, hits[0]["file_path"])
		}
		meta := out["results"].(map[string]any)["query_metadata"].(map[string]any)
		repos := meta["repositories"].([]any)
		info := repos[0].(map[string]any)
		head := strings.TrimSpace(testutil.Git(t, e.src, "rev-parse", "HEAD"))
		if info["commit"] != head || info["stale"] != false || info["vectors_ready"] != true || info["effective_mode"] != mode {
			t.Errorf("%s: repository info %v", mode, info)
		}
		// Every filter works in every mode.
		out = mustCall(t, cs, "search_code", map[string]any{"query_text": "hello returns hi", "repository_alias": "demo-global", "search_mode": mode, "language": "go"})
		for _, h := range results(t, out) {
			if !strings.HasSuffix(h["file_path"].(string), ".go") {
				t.Errorf("%s: language=go returned %v", mode, h["file_path"])
			}
		}
		out = mustCall(t, cs, "search_code", map[string]any{"query_text": "hello returns hi", "repository_alias": "demo-global", "search_mode": mode, "exclude_path": "src/**"})
		for _, h := range results(t, out) {
			if strings.HasPrefix(h["file_path"].(string), "src/") {
				t.Errorf("%s: exclude_path returned %v", mode, h["file_path"])
			}
		}
		out = mustCall(t, cs, "search_code", map[string]any{"query_text": "hello returns hi", "repository_alias": "demo-global", "search_mode": mode, "file_extensions": []any{".ts"}})
		for _, h := range results(t, out) {
			if !strings.HasSuffix(h["file_path"].(string), ".ts") {
				t.Errorf("%s: file_extensions returned %v", mode, h["file_path"])
			}
		}
	}
	// Temporal parameters are refused, not ignored.
	if out, isErr := call(t, cs, "search_code", map[string]any{"query_text": "x", "at_commit": "HEAD"}); !isErr || !strings.Contains(out["error"].(string), "at_commit") {
		t.Errorf("temporal parameter: %v", out)
	}
	// Several repositories: a missing one is reported, not dropped.
	out := mustCall(t, cs, "search_code", map[string]any{"query_text": "hello", "repository_alias": []any{"demo-global", "missing-global"}, "search_mode": "fts"})
	errs := out["results"].(map[string]any)["errors"].(map[string]any)
	if errs["missing-global"] == nil {
		t.Errorf("missing repository not reported: %v", out)
	}
}

func TestRegexSearchChunksAndIndexStatus(t *testing.T) {
	e := setup(t)
	cs := e.connect(t, auth.NormalUser, "")
	out := mustCall(t, cs, "regex_search", map[string]any{"repository_alias": "demo-global", "pattern": `func \w+\(\)`, "context_lines": 1})
	m := out["matches"].([]any)
	if len(m) != 1 {
		t.Fatalf("regex matches: %v", out)
	}
	first := m[0].(map[string]any)
	if first["file_path"] != "main.go" || first["line_number"].(float64) != 5 || first["column"].(float64) != 1 {
		t.Errorf("match: %v", first)
	}
	out = mustCall(t, cs, "regex_search", map[string]any{"repository_alias": "demo-global", "pattern": "HELLO", "case_sensitive": false, "include_patterns": []any{"*.py"}})
	if len(out["matches"].([]any)) != 1 {
		t.Errorf("case-insensitive with include: %v", out)
	}
	if res, isErr := call(t, cs, "regex_search", map[string]any{"repository_alias": "demo-global", "pattern": "("}); !isErr {
		t.Errorf("invalid regex accepted: %v", res)
	}

	// A chunk id from a search result resolves to the chunk.
	sr := mustCall(t, cs, "search_code", map[string]any{"query_text": "hello", "repository_alias": "demo-global", "search_mode": "fts"})
	id := results(t, sr)[0]["chunk_id"].(string)
	ch := mustCall(t, cs, "get_file_chunk", map[string]any{"repository_alias": "demo-global", "chunk_id": id, "include_embedding": true})["chunk"].(map[string]any)
	if !strings.Contains(ch["content"].(string), "def hello") || ch["embedding"].(map[string]any)["status"] != "ready" || ch["file_version_id"] == "" {
		t.Errorf("chunk: %v", ch)
	}
	if res, isErr := call(t, cs, "get_file_chunk", map[string]any{"repository_alias": "demo-global", "chunk_id": "nope"}); !isErr {
		t.Errorf("unknown chunk: %v", res)
	}

	st := mustCall(t, cs, "get_index_status", map[string]any{"repository_alias": "demo-global"})
	if st["state"] != "ready" || st["vectors_ready"] != true || st["fts"].(map[string]any)["status"] != "up_to_date" {
		t.Errorf("index status: %v", st)
	}
	man := st["manifest"].(map[string]any)
	if man["skipped"].(map[string]any)["binary"].(float64) != 1 {
		t.Errorf("bin.dat should be skipped as binary: %v", man["skipped"])
	}

	// An admin rebuilds it from scratch; searching keeps working meanwhile.
	admin := e.connect(t, auth.Admin, "")
	rj := mustCall(t, admin, "trigger_reindex", map[string]any{"repository_alias": "demo-global", "clear": true})
	if job := waitJob(t, admin, rj["job_id"].(string)); job["status"] != "completed" {
		t.Fatalf("reindex job: %v", job)
	}
	if len(results(t, mustCall(t, cs, "search_code", map[string]any{"query_text": "hello", "repository_alias": "demo-global"}))) == 0 {
		t.Fatal("no results after reindex")
	}
}

func TestRefreshIsIncrementalAndSearchFollows(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	testutil.Commit(t, e.src, "add retry", map[string]string{"src/retry.go": "package src\n\n// retryRequest sends the request again with exponential backoff.\nfunc retryRequest() {}\n"})
	j, err := e.a.Repos.Refresh(ctx, "admin", "demo")
	if err != nil {
		t.Fatal(err)
	}
	if done, err := e.a.Jobs.RunNow(ctx, j.ID); err != nil || done.Status != "completed" {
		t.Fatalf("refresh: %v %v", done, err)
	}
	st, _ := e.a.Index.Status(ctx, "demo")
	if !st.Manifest.Incremental || st.Manifest.ReadFiles != 1 || st.Manifest.ReusedFiles < 5 {
		t.Errorf("refresh was not incremental: %+v", st.Manifest)
	}
	cs := e.connect(t, auth.NormalUser, "")
	hits := results(t, mustCall(t, cs, "search_code", map[string]any{"query_text": "exponential backoff", "repository_alias": "demo-global", "search_mode": "fts"}))
	if len(hits) == 0 || hits[0]["file_path"] != "src/retry.go" {
		t.Fatalf("new file not found after refresh: %v", hits)
	}
}

// An incremental refresh (a file changed, one deleted, one added) serves
// exactly what a full rebuild of the same commit serves: no trace of the
// old content, and the same chunks with the same BM25 scores.
func TestIncrementalIndexEqualsFullRebuild(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	if err := os.Remove(filepath.Join(e.src, "src", "app.py")); err != nil {
		t.Fatal(err)
	}
	testutil.Commit(t, e.src, "rewrite main, drop app.py, add retry", map[string]string{
		"main.go":      "package main\n\n// launchRocket starts the countdown and ignites the engines.\nfunc launchRocket() { countdown(10) }\n\nfunc main() { launchRocket() }\n",
		"src/retry.go": "package src\n\n// retryRequest sends the request again with exponential backoff.\nfunc retryRequest() {}\n",
	})
	run := func(j jobs.Job, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if done, err := e.a.Jobs.RunNow(ctx, j.ID); err != nil || done.Status != jobs.Completed {
			t.Fatalf("job %s: %+v %v", j.Op, done, err)
		}
	}
	run(e.a.Repos.Refresh(ctx, "admin", "demo"))
	if st, _ := e.a.Index.Status(ctx, "demo"); !st.Manifest.Incremental {
		t.Fatalf("refresh was not incremental: %+v", st.Manifest)
	}
	queries := []string{"hello hi", "launch rocket countdown", "exponential backoff retry", "demo greets people", "fmt println main"}
	snapshot := func() []string {
		var out []string
		for _, q := range queries {
			for _, mode := range []string{"fts", "semantic"} {
				res, err := e.a.Search.Code(ctx, search.CodeQuery{Text: q, Aliases: []string{"demo-global"}, Mode: mode, Limit: 5})
				if err != nil {
					t.Fatal(err)
				}
				var hits []string
				for _, h := range res.Hits {
					if h.FilePath == "src/app.py" {
						t.Errorf("%s %q found the deleted file", mode, q)
					}
					hits = append(hits, fmt.Sprintf("%s:%s:%.4f", h.FilePath, h.ChunkID, h.SimilarityScore))
				}
				slices.Sort(hits) // equal scores may come in another order
				out = append(out, mode+" "+q+" -> "+strings.Join(hits, " "))
			}
		}
		return out
	}
	incremental := snapshot()
	if !strings.Contains(incremental[2], "main.go") || !strings.Contains(incremental[4], "src/retry.go") {
		t.Fatalf("changed and added files not found:\n%s", strings.Join(incremental, "\n"))
	}
	for pat, want := range map[string]int{"def hello": 0, "launchRocket": 3} {
		res, err := e.a.Search.Regex(ctx, search.RegexQuery{Pattern: pat, Aliases: []string{"demo-global"}})
		if err != nil || len(res.Repos) != 1 || res.Repos[0].TotalMatches != want {
			t.Fatalf("regex %q: %+v %v, want %d matches", pat, res, err, want)
		}
	}
	run(e.a.Repos.Reindex(ctx, "admin", "demo", true))
	if st, _ := e.a.Index.Status(ctx, "demo"); st.Manifest.Incremental {
		t.Fatal("full reindex was incremental")
	}
	full := snapshot()
	if !slices.Equal(incremental, full) {
		t.Fatalf("incremental index differs from a full rebuild:\nincremental:\n%s\nfull:\n%s", strings.Join(incremental, "\n"), strings.Join(full, "\n"))
	}
}

// The catalog is searched like any repository: by words, by meaning, by
// regex, and through wildcards; it follows repositories being added and
// removed.
func TestCatalogIsSearchable(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	cs := e.connect(t, auth.NormalUser, "")
	catalogHits := func(q, mode string) []string {
		t.Helper()
		res, err := e.a.Search.Code(ctx, search.CodeQuery{Text: q, Aliases: []string{"cidx-meta-global"}, Mode: mode, Limit: 5})
		if err != nil {
			t.Fatalf("%s %q: %v", mode, q, err)
		}
		var out []string
		for _, h := range res.Hits {
			out = append(out, h.FilePath)
		}
		return out
	}
	for _, mode := range []string{"fts", "semantic", "hybrid"} {
		if got := catalogHits("greets people over HTTP", mode); len(got) == 0 || got[0] != "demo.md" {
			t.Errorf("%s: catalog hits %v, want demo.md first", mode, got)
		}
	}
	rx := mustCall(t, cs, "regex_search", map[string]any{"repository_alias": "cidx-meta-global", "pattern": `greets people`})
	if !strings.Contains(fmt.Sprint(rx), "demo.md") {
		t.Errorf("regex on the catalog: %v", rx)
	}
	// A wildcard covers the catalog too, with its own commit (tree name).
	out := mustCall(t, cs, "search_code", map[string]any{"query_text": "greets people", "repository_alias": []any{"*-global"}, "search_mode": "fts"})
	meta := out["results"].(map[string]any)["query_metadata"].(map[string]any)
	var names []string
	for _, r := range meta["repositories"].([]any) {
		info := r.(map[string]any)
		names = append(names, info["repository_alias"].(string))
		if info["repository_alias"] == "cidx-meta-global" && (info["commit"] == "" || info["stale"] != false) {
			t.Errorf("catalog info %v", info)
		}
	}
	slices.Sort(names)
	if strings.Join(names, ",") != "cidx-meta-global,demo-global" {
		t.Errorf("wildcard searched %v", names)
	}
	st := mustCall(t, cs, "get_index_status", map[string]any{"repository_alias": "cidx-meta-global"})
	if st["stale"] != false || st["vectors_ready"] != true || st["fts"].(map[string]any)["status"] != "up_to_date" {
		t.Errorf("catalog index status: %v", st)
	}

	// A new repository appears in the catalog's index; a removed one leaves it.
	second := testutil.Repo(t, map[string]string{"README.md": "# Ledger\n\nLedger reconciles invoices and payments every night.\n", "main.go": "package main\n"})
	j, err := e.a.Repos.Add(ctx, "admin", "ledger", second, "")
	if err != nil {
		t.Fatal(err)
	}
	if done, err := e.a.Jobs.RunNow(ctx, j.ID); err != nil || done.Status != jobs.Completed {
		t.Fatalf("add: %+v %v", done, err)
	}
	if got := catalogHits("reconciles invoices payments", "fts"); len(got) == 0 || got[0] != "ledger.md" {
		t.Errorf("after add: %v", got)
	}
	j, err = e.a.Repos.Remove(ctx, "admin", "demo")
	if err != nil {
		t.Fatal(err)
	}
	if done, err := e.a.Jobs.RunNow(ctx, j.ID); err != nil || done.Status != jobs.Completed {
		t.Fatalf("remove: %+v %v", done, err)
	}
	if got := catalogHits("greets people over HTTP", "fts"); slices.Contains(got, "demo.md") {
		t.Errorf("removed repository still in the catalog index: %v", got)
	}
}

// An index written in an older format is not served: searching says why
// and how to fix it, and the server start queues its rebuild, after which
// search works again.
func TestOutdatedIndexFormatIsRebuiltAtStart(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	if _, err := e.a.DB.ExecContext(ctx, `UPDATE indexes SET manifest = json_set(manifest, '$.version', 1) WHERE alias = 'demo'`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // the index row is cached for a second
	if !e.a.Index.Outdated(ctx, "demo") {
		t.Fatal("format 1 index not reported outdated")
	}
	_, err := e.a.Search.Code(ctx, search.CodeQuery{Text: "hello", Aliases: []string{"demo-global"}, Mode: "fts"})
	if err == nil || !strings.Contains(err.Error(), "another cidx version") || !strings.Contains(err.Error(), "trigger_reindex") {
		t.Fatalf("search on an outdated index: %v", err)
	}
	bg, cancel := context.WithCancel(ctx)
	defer cancel()
	e.a.StartBackground(bg)
	deadline := time.Now().Add(30 * time.Second)
	for e.a.Index.Outdated(ctx, "demo") {
		if time.Now().After(deadline) {
			t.Fatal("the outdated index was not rebuilt")
		}
		time.Sleep(100 * time.Millisecond)
	}
	res, err := e.a.Search.Code(ctx, search.CodeQuery{Text: "hello", Aliases: []string{"demo-global"}, Mode: "fts"})
	if err != nil || len(res.Hits) == 0 {
		t.Fatalf("search after the rebuild: %+v %v", res, err)
	}
}

// The FTS options of search_code do what they say: fuzzy and edit
// distance forgive typos, case_sensitive is exact, regex=true matches
// lines, snippet_lines bounds the snippet, min_score drops weaker hits,
// and several repositories can be ranked per repository and grouped.
func TestSearchCodeFTSOptions(t *testing.T) {
	e := setup(t)
	cs := e.connect(t, auth.NormalUser, "")
	paths := func(args map[string]any) []string {
		t.Helper()
		args["search_mode"] = "fts"
		if args["repository_alias"] == nil {
			args["repository_alias"] = "demo-global"
		}
		var out []string
		for _, h := range results(t, mustCall(t, cs, "search_code", args)) {
			out = append(out, h["file_path"].(string))
		}
		return out
	}
	if got := paths(map[string]any{"query_text": "helo"}); len(got) != 0 {
		t.Errorf("a typo matched without fuzzy: %v", got)
	}
	if got := paths(map[string]any{"query_text": "helo", "fuzzy": true}); len(got) == 0 || got[0] != "src/app.py" {
		t.Errorf("fuzzy: %v", got)
	}
	if got := paths(map[string]any{"query_text": "hwllp", "edit_distance": 1}); len(got) != 0 {
		t.Errorf("edit_distance 1 matched two edits: %v", got)
	}
	if got := paths(map[string]any{"query_text": "hwllp", "edit_distance": 2}); len(got) == 0 || got[0] != "src/app.py" {
		t.Errorf("edit_distance 2: %v", got)
	}
	if got := paths(map[string]any{"query_text": "Demo greets", "case_sensitive": true}); len(got) == 0 || got[0] != "README.md" {
		t.Errorf("case_sensitive, right case: %v", got)
	}
	if got := paths(map[string]any{"query_text": "DEMO GREETS", "case_sensitive": true}); len(got) != 0 {
		t.Errorf("case_sensitive, wrong case: %v", got)
	}
	if got := paths(map[string]any{"query_text": "DEMO GREETS"}); len(got) == 0 || got[0] != "README.md" {
		t.Errorf("case-insensitive by default: %v", got)
	}
	hits := results(t, mustCall(t, cs, "search_code", map[string]any{"query_text": `def \w+\(\)`, "regex": true, "search_mode": "fts", "repository_alias": "demo-global", "snippet_lines": 0}))
	if len(hits) != 1 || hits[0]["file_path"] != "src/app.py" || hits[0]["line_number"] != float64(1) || hits[0]["code_snippet"] != "def hello():\n" {
		t.Errorf("regex with snippet_lines 0: %v", hits)
	}
	if out, isErr := call(t, cs, "search_code", map[string]any{"query_text": "x", "regex": true, "fuzzy": true, "search_mode": "fts", "repository_alias": "demo-global"}); !isErr || !strings.Contains(out["error"].(string), "fuzzy") {
		t.Errorf("regex with fuzzy: %v", out)
	}
	hits = results(t, mustCall(t, cs, "search_code", map[string]any{"query_text": "hello hi main", "search_mode": "fts", "repository_alias": "demo-global", "min_score": 0.99}))
	for _, h := range hits {
		if h["similarity_score"].(float64) < 0.99 {
			t.Errorf("min_score 0.99 kept %v", h)
		}
	}
	if len(hits) == 0 {
		t.Error("min_score dropped the best hit (normalised to 1)")
	}
	// Two repositories (the demo and the catalog), grouped and per repository.
	out := mustCall(t, cs, "search_code", map[string]any{"query_text": "demo greets people", "search_mode": "fts", "repository_alias": []any{"demo-global", "cidx-meta-global"},
		"aggregation_mode": "per_repo", "response_format": "grouped", "limit": 2})
	groups := out["results"].(map[string]any)["results_by_repo"].(map[string]any)
	if len(groups) != 2 || groups["demo-global"] == nil || groups["cidx-meta-global"] == nil {
		t.Errorf("per_repo, grouped: %v", out["results"])
	}
	// exclude_patterns drops repositories by alias from a multi-repository search.
	out = mustCall(t, cs, "search_code", map[string]any{"query_text": "demo greets people", "search_mode": "fts", "repository_alias": "*-global", "exclude_patterns": []any{"^cidx-meta"}})
	meta := out["results"].(map[string]any)["query_metadata"].(map[string]any)
	if n := len(meta["repositories"].([]any)); n != 1 || meta["repositories"].([]any)[0].(map[string]any)["repository_alias"] != "demo-global" {
		t.Errorf("exclude_patterns: searched %v", meta["repositories"])
	}
	if out, isErr := call(t, cs, "search_code", map[string]any{"query_text": "x", "repository_alias": "*-global", "exclude_patterns": []any{"(unclosed"}}); !isErr || !strings.Contains(out["error"].(string), "exclude_patterns") {
		t.Errorf("invalid exclude pattern: %v", out)
	}
}

// Changing the embedder in config.yaml takes effect at the next start:
// the repository is re-embedded in the background (no unchanged file is
// read again), and semantic search then runs on the new vectors.
func TestEmbedderChangeReembedsAtStart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := testutil.Repo(t, map[string]string{"a.go": "package a\n\n// Retry sends the request again.\nfunc Retry() {}\n", "b.py": "def parse(): pass\n"})
	a, err := app.Open(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	j, err := a.Repos.Add(ctx, "admin", "demo", src, "")
	if err != nil {
		t.Fatal(err)
	}
	if done, err := a.Jobs.RunNow(ctx, j.ID); err != nil || done.Status != jobs.Completed {
		t.Fatalf("add: %+v %v", done, err)
	}
	a.Close()

	// An OpenAI-compatible server: a deterministic 16-dimensional vector
	// per input.
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		var req struct {
			Input []string `json:"input"`
			Model string   `json:"model"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.URL.Path != "/v1/embeddings" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i, in := range req.Input {
			v := make([]float32, 16)
			for k, c := range []byte(in) {
				v[(int(c)+k)%16] += 1
			}
			data = append(data, item{i, v})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
	}))
	defer srv.Close()
	cfg := "embedding:\n  provider: openai\n  url: " + srv.URL + "\n  model: test-embed\n  dimensions: 16\n"
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := app.Open(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if !b.Index.ForeignVectors(ctx, "demo") {
		t.Fatal("vectors of the builtin embedder not reported foreign")
	}
	res, err := b.Search.Code(ctx, search.CodeQuery{Text: "retry the request", Aliases: []string{"demo-global"}})
	if err != nil || len(res.Repos) != 1 || res.Repos[0].EffectiveMode != "fts" || !strings.Contains(res.Repos[0].Note, "not the configured embedder") {
		t.Fatalf("before re-embedding: %+v %v", res, err)
	}
	bg, cancel := context.WithCancel(ctx)
	defer cancel()
	b.StartBackground(bg)
	deadline := time.Now().Add(30 * time.Second)
	for b.Index.ForeignVectors(ctx, "demo") {
		if time.Now().After(deadline) {
			t.Fatal("not re-embedded")
		}
		time.Sleep(100 * time.Millisecond)
	}
	st, _ := b.Index.Status(ctx, "demo")
	if st.Embedder != "openai:test-embed:16" || !st.VectorsReady || st.Manifest.ReadFiles != 0 || st.Manifest.Embedded == 0 {
		t.Fatalf("after re-embedding: %+v %+v", st, st.Manifest)
	}
	res, err = b.Search.Code(ctx, search.CodeQuery{Text: "retry the request", Aliases: []string{"demo-global"}})
	if err != nil || res.Repos[0].EffectiveMode != "semantic" || len(res.Hits) == 0 || requests.Load() == 0 {
		t.Fatalf("semantic search after re-embedding: %+v %v", res, err)
	}
}

// Searches running while refreshes publish new builds and prune old ones
// never fail and never see a half-built index: every answer is complete
// for the build it read.
func TestSearchesDuringRefreshes(t *testing.T) {
	e := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var failures atomic.Int32
	var searches atomic.Int32
	done := make(chan struct{})
	worker := func(run func() error) {
		for ctx.Err() == nil {
			if err := run(); err != nil && ctx.Err() == nil {
				if failures.Add(1) <= 3 {
					t.Errorf("search during refresh: %v", err)
				}
			}
			searches.Add(1)
		}
		done <- struct{}{}
	}
	for _, mode := range []string{"fts", "semantic", "hybrid"} {
		go worker(func() error {
			res, err := e.a.Search.Code(ctx, search.CodeQuery{Text: "hello returns hi", Aliases: []string{"demo-global"}, Mode: mode})
			if err == nil && len(res.Hits) == 0 {
				err = fmt.Errorf("%s: no hits", mode)
			}
			return err
		})
	}
	go worker(func() error {
		res, err := e.a.Search.Regex(ctx, search.RegexQuery{Pattern: `def hello`, Aliases: []string{"demo-global"}})
		if err == nil && res.Repos[0].TotalMatches != 1 {
			err = fmt.Errorf("regex: %d matches", res.Repos[0].TotalMatches)
		}
		return err
	})
	for i := range 5 {
		testutil.Commit(t, e.src, fmt.Sprintf("change %d", i), map[string]string{fmt.Sprintf("gen/f%d.go", i): fmt.Sprintf("package gen\n\n// Step%d is change %s.\nfunc Step%d() {}\n", i, []string{"alpha", "bravo", "charlie", "delta", "echo"}[i], i)})
		j, err := e.a.Repos.Refresh(context.Background(), "admin", "demo")
		if err != nil {
			t.Fatal(err)
		}
		if d, err := e.a.Jobs.RunNow(context.Background(), j.ID); err != nil || d.Status != jobs.Completed {
			t.Fatalf("refresh %d: %+v %v", i, d, err)
		}
	}
	cancel()
	for range 4 {
		<-done
	}
	if searches.Load() < 20 {
		t.Errorf("only %d searches ran during the refreshes", searches.Load())
	}
	res, err := e.a.Search.Code(context.Background(), search.CodeQuery{Text: "echo change", Aliases: []string{"demo-global"}, Mode: "fts"})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].FilePath != "gen/f4.go" {
		t.Fatalf("last change not searchable: %+v %v", res, err)
	}
}

// A query that is one identifier puts the chunks defining it first, in fts
// and hybrid, even where BM25 alone prefers a chunk that repeats the name.
func TestIdentifierQueriesFindDefinitionsFirst(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	src := testutil.Repo(t, map[string]string{
		"order.go":  "package shop\n\n// ProcessOrder charges the card and ships the parcel.\nfunc ProcessOrder(id int) error {\n\treturn charge(id)\n}\n",
		"batch.go":  "package shop\n\nfunc nightly() {\n\tProcessOrder(1)\n\tProcessOrder(2)\n\tProcessOrder(3)\n\t// process order: retry ProcessOrder on failure\n\tProcessOrder(4)\n}\n",
		"cart.py":   "class Cart:\n    def process_order(self):\n        return True\n",
		"runner.py": "def run(cart):\n    cart.process_order()\n    cart.process_order()\n    # process the order of the cart again\n    cart.process_order()\n",
	})
	j, err := e.a.Repos.Add(ctx, "admin", "shop", src, "")
	if err != nil {
		t.Fatal(err)
	}
	if done, err := e.a.Jobs.RunNow(ctx, j.ID); err != nil || done.Status != jobs.Completed {
		t.Fatalf("add: %+v %v", done, err)
	}
	top := func(q, mode string) string {
		t.Helper()
		res, err := e.a.Search.Code(ctx, search.CodeQuery{Text: q, Aliases: []string{"shop-global"}, Mode: mode})
		if err != nil || len(res.Hits) == 0 {
			t.Fatalf("%s %q: %+v %v", mode, q, res, err)
		}
		return res.Hits[0].FilePath + ":" + res.Hits[0].Symbol
	}
	// BM25 alone ranks the callers first (a query of several words is not
	// an identifier); check the premise.
	hits, err := e.a.Search.Code(ctx, search.CodeQuery{Text: "process order", Aliases: []string{"shop-global"}, Mode: "fts"})
	if err != nil || len(hits.Hits) == 0 || hits.Hits[0].FilePath != "batch.go" {
		t.Fatalf("premise: words rank batch.go first: %+v %v", hits, err)
	}
	for _, mode := range []string{"fts", "hybrid"} {
		if got := top("ProcessOrder", mode); got != "order.go:ProcessOrder" {
			t.Errorf("%s ProcessOrder: top %s", mode, got)
		}
		// The method is defined inside the class's chunk.
		if got := top("Cart.process_order", mode); got != "cart.py:Cart" {
			t.Errorf("%s Cart.process_order: top %s", mode, got)
		}
	}
	// Which chunks define a name: by their own symbol, or by a symbol of
	// their file inside them (the method in the class chunk).
	rd, err := e.a.Index.Open(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	rowid := map[string]int64{}
	res, err := e.a.Search.Code(ctx, search.CodeQuery{Text: "cart process order run", Aliases: []string{"shop-global"}, Mode: "fts", Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Hits {
		c, err := rd.ChunkByID(ctx, h.ChunkID)
		if err != nil {
			t.Fatal(err)
		}
		rowid[h.FilePath] = c.Rowid
	}
	if rowid["cart.py"] == 0 || rowid["runner.py"] == 0 {
		t.Fatalf("chunks: %v", rowid)
	}
	ids := []int64{rowid["cart.py"], rowid["runner.py"]}
	for name, want := range map[string]string{"Cart.process_order": "cart.py", "PROCESS_ORDER": "cart.py", "Cart": "cart.py", "run": "runner.py", "order": ""} {
		defs, err := rd.Defining(ctx, ids, name)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range []string{"cart.py", "runner.py"} {
			if defs[rowid[p]] {
				got = append(got, p)
			}
		}
		if strings.Join(got, ",") != want {
			t.Errorf("Defining(%q) = %v, want %q", name, got, want)
		}
	}
}

// Open indexes are bounded by index.reader_memory_mb: past it the least
// recently searched one is closed, and reopened when searched again.
func TestReaderMemoryBudget(t *testing.T) {
	ctx := context.Background()
	var b strings.Builder
	b.WriteString("package big\n\n")
	for i := range 700 {
		fmt.Fprintf(&b, "// F%d does step %d.\nfunc F%d() int { return %d }\n\n", i, i, i, i)
	}
	for _, budget := range []int{1, 0} { // 1 MB: room for one repository's vectors; 0: the default
		dir := t.TempDir()
		if budget > 0 {
			os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(fmt.Sprintf("index:\n  reader_memory_mb: %d\n", budget)), 0o600)
		}
		a, err := app.Open(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		for _, alias := range []string{"one", "two"} {
			src := testutil.Repo(t, map[string]string{"big.go": b.String()})
			j, err := a.Repos.Add(ctx, "admin", alias, src, "")
			if err != nil {
				t.Fatal(err)
			}
			if done, err := a.Jobs.RunNow(ctx, j.ID); err != nil || done.Status != jobs.Completed {
				t.Fatalf("add: %+v %v", done, err)
			}
		}
		open := func(alias string) *index.Reader {
			t.Helper()
			r, err := a.Index.Open(ctx, alias)
			if err != nil {
				t.Fatal(err)
			}
			r.Release()
			return r
		}
		first := open("one")
		open("two")
		again := open("one")
		if reopened := first != again; reopened != (budget > 0) {
			t.Errorf("budget %d MB: reopened %v", budget, reopened)
		}
		res, err := a.Search.Code(ctx, search.CodeQuery{Text: "step 42", Aliases: []string{"one-global", "two-global"}, Multi: true, Mode: "hybrid"})
		if err != nil || len(res.Hits) == 0 || len(res.Repos) != 2 {
			t.Errorf("budget %d MB: search across both: %+v %v", budget, res, err)
		}
		a.Close()
	}
}
