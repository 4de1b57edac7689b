package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cidx/cidx/internal/app"
	"github.com/cidx/cidx/internal/auth"
	"github.com/cidx/cidx/internal/jobs"
	"github.com/cidx/cidx/internal/testutil"
	"github.com/cidx/cidx/internal/web"
)

// env is a running server over a real data directory with one golden
// repository (demo-global) and one user per role.
type env struct {
	a      *app.App
	url    string
	tokens map[auth.Role]string
	src    string
	big    string // content of big.txt
	long   string // content of long.txt
}

func bigFile() string {
	var b strings.Builder
	for i := 1; i <= 5000; i++ {
		b.WriteString(strings.Repeat("x", i%97))
		b.WriteString(" line ")
		b.WriteString(strings.Repeat("é", i%7))
		b.WriteString("\n")
	}
	return b.String()
}

func longFile() string {
	return "first line\nsecond line\n" + strings.Repeat("0123456789", 10_000) + "\nafter the long line\nlast line without newline"
}

func setup(t *testing.T) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e := &env{tokens: map[auth.Role]string{}, big: bigFile(), long: longFile()}
	e.src = testutil.Repo(t, map[string]string{
		"README.md":     "# Demo\n\nDemo greets people over HTTP.\n",
		"main.go":       "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hi\") }\n",
		"big.txt":       e.big,
		"long.txt":      e.long,
		"src/app.py":    "def hello():\n    return 'hi'\n",
		"src/deep/x.ts": "export const x = 1;\n",
		"bin.dat":       "abc\x00def",
		".gitignore":    "*.log\n",
	})
	// A symlink that points outside the repository, committed as a symlink.
	if err := os.Symlink("/etc/passwd", filepath.Join(e.src, "escape")); err != nil {
		t.Fatal(err)
	}
	testutil.Commit(t, e.src, "add symlink", nil)

	a, err := app.Open(ctx, t.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	e.a = a
	admin, created, err := a.Auth.Bootstrap(ctx)
	if err != nil || !created {
		t.Fatalf("bootstrap: %v", err)
	}
	e.tokens[auth.Admin] = admin
	for name, role := range map[string]auth.Role{"nora": auth.NormalUser, "pete": auth.PowerUser} {
		if _, err := a.Auth.CreateUser(ctx, name, role, auth.GeneratePassword()); err != nil {
			t.Fatal(err)
		}
		tok, _, err := a.Auth.CreateToken(ctx, name, "test")
		if err != nil {
			t.Fatal(err)
		}
		e.tokens[role] = tok
	}
	j, err := a.Repos.Add(ctx, "admin", "demo", e.src, "")
	if err != nil {
		t.Fatal(err)
	}
	if done, err := a.Jobs.RunNow(ctx, j.ID); err != nil || done.Status != jobs.Completed {
		t.Fatalf("add demo: %+v %v", done, err)
	}
	a.StartBackground(ctx)
	srv := httptest.NewServer(web.Handler(web.Options{Server: a.MCPServer(""), Verify: a.Auth.VerifyToken}))
	t.Cleanup(srv.Close)
	e.url = srv.URL
	return e
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connect opens an MCP session over HTTP. version "" lets the client pick
// (the go-sdk client tries the stateless 2026-07-28 protocol first).
func (e *env) connect(t *testing.T, role auth.Role, version string) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	tr := &sdk.StreamableClientTransport{Endpoint: e.url + "/mcp", HTTPClient: &http.Client{Transport: bearer{e.tokens[role], http.DefaultTransport}}}
	cs, err := c.Connect(context.Background(), tr, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect as %s: %v", role, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call runs a tool and decodes its structured result.
func call(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil || out == nil {
		t.Fatalf("%s: no structured content: %s", name, b)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: want one text block, got %d", name, len(res.Content))
	}
	if txt, ok := res.Content[0].(*sdk.TextContent); !ok || !json.Valid([]byte(txt.Text)) {
		t.Fatalf("%s: text mirror is not JSON", name)
	}
	return out, res.IsError
}

func mustCall(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	out, isErr := call(t, cs, name, args)
	if isErr || out["success"] != true {
		t.Fatalf("%s(%v) failed: %v", name, args, out)
	}
	return out
}

func TestHTTPRequiresBearerToken(t *testing.T) {
	e := setup(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	for _, auth := range []string{"", "Bearer cidx_WRONGWRONGWRONGWRONGWRONG", "Basic YWRtaW46YWRtaW4="} {
		req, _ := http.NewRequest("POST", e.url+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("auth %q: status %d, want 401", auth, resp.StatusCode)
		}
		want := `Bearer resource_metadata="` + e.url + `/.well-known/oauth-protected-resource"`
		if got := resp.Header.Get("WWW-Authenticate"); got != want {
			t.Errorf("auth %q: WWW-Authenticate %q, want %q", auth, got, want)
		}
	}
	resp, err := http.Get(e.url + "/.well-known/oauth-protected-resource")
	if err != nil {
		t.Fatal(err)
	}
	var prm map[string]any
	json.NewDecoder(resp.Body).Decode(&prm)
	resp.Body.Close()
	if prm["resource"] != e.url+"/mcp" {
		t.Fatalf("protected resource metadata: %v", prm)
	}
	resp, err = http.Get(e.url + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
}

func TestBothProtocolEras(t *testing.T) {
	e := setup(t)
	for _, v := range []string{"", "2025-11-25", "2025-06-18"} {
		cs := e.connect(t, auth.NormalUser, v)
		got := cs.InitializeResult().ProtocolVersion
		if v == "" && got != "2026-07-28" {
			t.Errorf("default client negotiated %s, want the stateless 2026-07-28", got)
		}
		if v != "" && got != v {
			t.Errorf("asked %s, negotiated %s", v, got)
		}
		out := mustCall(t, cs, "whoami", nil)
		if out["username"] != "nora" || out["role"] != "normal_user" {
			t.Errorf("protocol %s: whoami = %v", got, out)
		}
	}
}

func toolNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.OutputSchema == nil || tool.InputSchema == nil || tool.Annotations == nil || tool.Description == "" {
			t.Errorf("tool %s lacks a schema, annotations or description", tool.Name)
		}
		names = append(names, tool.Name)
	}
	return names
}

func TestToolListIsFilteredPerRoleInFixedOrder(t *testing.T) {
	e := setup(t)
	counts := map[auth.Role]int{}
	for _, role := range auth.Roles {
		cs := e.connect(t, role, "2025-11-25")
		names := toolNames(t, cs)
		var want []string
		for _, info := range e.a.Registry.Visible(role) {
			want = append(want, info.Name)
		}
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("%s sees %v, want %v", role, names, want)
		}
		if again := toolNames(t, cs); !slices.Equal(again, names) {
			t.Errorf("%s: order changed between calls", role)
		}
		counts[role] = len(names)
	}
	if !(counts[auth.NormalUser] < counts[auth.Admin]) || counts[auth.Admin] != len(e.a.Registry.Tools()) {
		t.Fatalf("counts %v, registry %d", counts, len(e.a.Registry.Tools()))
	}
	if slices.Contains(toolNames(t, e.connect(t, auth.NormalUser, "")), "create_user") {
		t.Fatal("normal user sees create_user over the stateless protocol")
	}
	// tools/list is paid for in every conversation: keep a normal user's
	// under 20,000 bytes of JSON (about 5,000 tokens).
	res, err := e.connect(t, auth.NormalUser, "").ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Tools)
	if len(b) > 20000 {
		t.Errorf("normal user's tools/list is %d bytes of JSON, over the 20,000 budget", len(b))
	}
}

// harmlessArgs are valid-looking arguments for every tool that change
// nothing lasting, so each tool can be called by each role.
var harmlessArgs = map[string]map[string]any{
	"get_tool_categories":   {},
	"first_time_user_guide": {},
	"cidx_quick_reference":  {},
	"whoami":                {},
	"list_users":            {},
	"create_user":           {"username": "x", "password": "weak", "role": "normal_user"},
	"list_global_repos":     {},
	"global_repo_status":    {"alias": "demo-global"},
	"discover_repositories": {},
	"get_file_content":      {"repository_alias": "demo-global", "file_path": "main.go"},
	"list_files":            {"repository_alias": "demo-global"},
	"browse_directory":      {"repository_alias": "demo-global"},
	"directory_tree":        {"repository_alias": "demo-global"},
	"add_golden_repo":       {"url": "/nonexistent/path", "alias": "nope"},
	"remove_golden_repo":    {"alias": "nonexistent"},
	"refresh_golden_repo":   {"alias": "nonexistent"},
	"get_job_details":       {"job_id": "00000000-0000-0000-0000-000000000000"},
	"get_job_statistics":    {},
	"check_health":          {},
	"get_global_config":     {},
	"set_global_config":     {"refresh_interval": 3600},
	"search_code":           {"query_text": "greets people", "repository_alias": "demo-global"},
	"regex_search":          {"pattern": "func main", "repository_alias": "demo-global"},
	"get_file_chunk":        {"repository_alias": "demo-global", "chunk_id": "0000"},
	"trigger_reindex":       {"repository_alias": "nonexistent"},
	"get_index_status":      {"repository_alias": "demo-global"},
}

func TestPermissionsForEveryToolAndRole(t *testing.T) {
	e := setup(t)
	for _, role := range auth.Roles {
		cs := e.connect(t, role, "2025-11-25")
		for _, info := range e.a.Registry.Tools() {
			args, ok := harmlessArgs[info.Name]
			if !ok {
				t.Fatalf("tool %s has no entry in harmlessArgs: add one", info.Name)
			}
			out, isErr := call(t, cs, info.Name, args)
			denied := isErr && strings.Contains(out["error"].(string), "permission denied")
			if role.Has(info.Permission) {
				if denied {
					t.Errorf("%s denied %s: %v", role, info.Name, out)
				}
				continue
			}
			if !denied || !strings.Contains(out["error"].(string), `"`+string(info.Permission)+`"`) {
				t.Errorf("%s calling %s: want a denial naming %q, got %v", role, info.Name, info.Permission, out)
			}
		}
	}
}

func TestGetFileContentPagesCoverEveryLineOnce(t *testing.T) {
	e := setup(t)
	admin := e.connect(t, auth.Admin, "")
	reader := e.connect(t, auth.NormalUser, "")
	for _, budget := range []int{1000, 5000, 20000} {
		mustCall(t, admin, "set_global_config", map[string]any{"max_tokens_per_request": budget})
		for _, f := range []struct{ path, content string }{{"big.txt", e.big}, {"long.txt", e.long}, {"main.go", ""}} {
			var got strings.Builder
			offset, pages, cuts := 1, 0, 0
			var hash string
			for {
				out := mustCall(t, reader, "get_file_content", map[string]any{"repository_alias": "demo-global", "file_path": f.path, "offset": offset})
				md := out["metadata"].(map[string]any)
				if int(md["max_tokens_per_request"].(float64)) != budget {
					t.Fatalf("budget %d not applied: %v", budget, md["max_tokens_per_request"])
				}
				if est := md["estimated_tokens"].(float64); est > float64(budget) {
					t.Fatalf("page of %v tokens over budget %d", est, budget)
				}
				if hash == "" {
					hash = md["content_hash"].(string)
				} else if md["content_hash"] != hash {
					t.Fatal("content_hash changed between pages")
				}
				for _, c := range out["content"].([]any) {
					got.WriteString(c.(map[string]any)["text"].(string))
				}
				if md["line_cut"] == true {
					cuts++
					// The rest of an over-long line is skipped: add it back to compare.
					line := strings.Split(f.content, "\n")[offset-1]
					got.WriteString(line[len(line)-(len(line)-budget*4):] + "\n")
				}
				pages++
				next, ok := md["next_offset"].(float64)
				if !ok {
					if md["has_more"] != false || md["pagination_hint"] != nil {
						t.Fatalf("last page inconsistent: %v", md)
					}
					break
				}
				if md["has_more"] != true || !strings.Contains(md["pagination_hint"].(string), "offset=") {
					t.Fatalf("continuation inconsistent: %v", md)
				}
				offset = int(next)
			}
			if f.content == "" {
				continue
			}
			if got.String() != f.content {
				t.Fatalf("budget %d, %s: concatenated pages differ from the file (%d vs %d bytes, %d pages)", budget, f.path, got.Len(), len(f.content), pages)
			}
			if f.path == "long.txt" && budget*4 < 100_000 && cuts != 1 {
				t.Fatalf("budget %d: the 100 KB line should be cut once, got %d", budget, cuts)
			}
		}
	}
}

func TestPathEscapesAreRefused(t *testing.T) {
	e := setup(t)
	cs := e.connect(t, auth.NormalUser, "")
	bad := map[string]string{
		"../../etc/passwd":         "leaves the repository",
		"src/../../x":              "leaves the repository",
		"/etc/passwd":              "absolute",
		"a\x00b":                   "NUL",
		strings.Repeat("a/", 3000): "long",
		".git/config":              ".git",
		"escape":                   "outside",
		"bin.dat":                  "binary",
		"src":                      "not a file",
		"missing.go":               "not found",
	}
	for p, want := range bad {
		out, isErr := call(t, cs, "get_file_content", map[string]any{"repository_alias": "demo-global", "file_path": p})
		msg, _ := out["error"].(string)
		if !isErr || out["success"] != false || !strings.Contains(strings.ToLower(msg), strings.ToLower(want)) {
			t.Errorf("path %.40q: want an error mentioning %q, got %v", p, want, out)
		}
	}
	for _, tool := range []string{"browse_directory", "directory_tree", "list_files"} {
		out, isErr := call(t, cs, tool, map[string]any{"repository_alias": "demo-global", "path": "../"})
		if !isErr || !strings.Contains(out["error"].(string), "leaves the repository") {
			t.Errorf("%s with path ../: %v", tool, out)
		}
	}
	out, isErr := call(t, cs, "get_file_content", map[string]any{"repository_alias": "dmeo-global", "file_path": "main.go"})
	if !isErr || !strings.Contains(out["error"].(string), "not found") || !slices.Contains(toStrings(out["suggestions"]), "demo-global") {
		t.Errorf("unknown alias: %v", out)
	}
}

func toStrings(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func TestBrowsingTools(t *testing.T) {
	e := setup(t)
	cs := e.connect(t, auth.NormalUser, "")
	out := mustCall(t, cs, "browse_directory", map[string]any{"repository_alias": "demo-global", "path": "src", "recursive": false})
	st := out["structure"].(map[string]any)
	files := st["files"].([]any)
	if len(files) != 1 || files[0].(map[string]any)["path"] != "src/app.py" {
		t.Errorf("non-recursive src: %v", files)
	}
	out = mustCall(t, cs, "browse_directory", map[string]any{"repository_alias": "demo-global", "language": "py"})
	if n := len(out["structure"].(map[string]any)["files"].([]any)); n != 1 {
		t.Errorf("language py: %d files", n)
	}
	out = mustCall(t, cs, "directory_tree", map[string]any{"repository_alias": "demo-global", "show_stats": true})
	tree := out["tree_string"].(string)
	for _, want := range []string{"src/", "main.go", "deep/"} {
		if !strings.Contains(tree, want) {
			t.Errorf("tree lacks %q:\n%s", want, tree)
		}
	}
	out = mustCall(t, cs, "list_files", map[string]any{"repository_alias": []any{"*-global"}, "response_format": "grouped"})
	byRepo := out["results_by_repo"].(map[string]any)
	if _, ok := byRepo["demo-global"]; !ok {
		t.Errorf("wildcard listing lacks demo-global: %v", out)
	}
	if _, ok := byRepo["cidx-meta-global"]; !ok {
		t.Errorf("wildcard listing lacks the catalog: %v", out)
	}
	out = mustCall(t, cs, "list_files", map[string]any{"repository_alias": []any{"demo-global", "missing-global"}})
	if errs := out["errors"].(map[string]any); errs["missing-global"] == nil {
		t.Errorf("missing repository must be reported: %v", out)
	}
	// The catalog describes the repository.
	out = mustCall(t, cs, "get_file_content", map[string]any{"repository_alias": "cidx-meta-global", "file_path": "demo.md"})
	text := out["content"].([]any)[0].(map[string]any)["text"].(string)
	if !strings.Contains(text, "Demo greets people over HTTP.") || !strings.Contains(text, "default_branch: main") {
		t.Errorf("catalog entry:\n%s", text)
	}
}

func waitJob(t *testing.T, cs *sdk.ClientSession, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		out := mustCall(t, cs, "get_job_details", map[string]any{"job_id": id})
		job := out["job"].(map[string]any)
		switch job["status"] {
		case "completed", "failed":
			return job
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("job %s did not finish", id)
	return nil
}

func TestGoldenRepositoryLifecycleOverMCP(t *testing.T) {
	e := setup(t)
	admin := e.connect(t, auth.Admin, "")
	nora := e.connect(t, auth.NormalUser, "")
	src := testutil.Repo(t, map[string]string{"hello.txt": "hello\n"})
	out := mustCall(t, admin, "add_golden_repo", map[string]any{"url": src, "alias": "second"})
	id := out["job_id"].(string)
	if out["alias"] != "second-global" {
		t.Errorf("add result: %v", out)
	}
	// Jobs are private to their submitter, except for admins.
	if res, isErr := call(t, nora, "get_job_details", map[string]any{"job_id": id}); !isErr {
		t.Errorf("normal user sees the admin's job: %v", res)
	}
	job := waitJob(t, admin, id)
	if job["status"] != "completed" || job["progress"].(float64) != 100 {
		t.Fatalf("add job: %v", job)
	}
	got := mustCall(t, nora, "get_file_content", map[string]any{"repository_alias": "second-global", "file_path": "hello.txt"})
	if got["content"].([]any)[0].(map[string]any)["text"] != "hello\n" {
		t.Fatalf("read after add: %v", got)
	}
	st := mustCall(t, nora, "global_repo_status", map[string]any{"alias": "second-global"})
	if st["state"] != "ready" || st["files"].(float64) != 1 {
		t.Errorf("status: %v", st)
	}
	testutil.Commit(t, src, "more", map[string]string{"hello.txt": "hello again\n"})
	out = mustCall(t, admin, "refresh_golden_repo", map[string]any{"alias": "second"})
	if job := waitJob(t, admin, out["job_id"].(string)); job["status"] != "completed" {
		t.Fatalf("refresh: %v", job)
	}
	got = mustCall(t, nora, "get_file_content", map[string]any{"repository_alias": "second-global", "file_path": "hello.txt"})
	if got["content"].([]any)[0].(map[string]any)["text"] != "hello again\n" {
		t.Fatalf("read after refresh: %v", got)
	}
	stats := mustCall(t, admin, "get_job_statistics", nil)["statistics"].(map[string]any)
	if stats["completed"].(float64) < 2 {
		t.Errorf("statistics: %v", stats)
	}
	out = mustCall(t, admin, "remove_golden_repo", map[string]any{"alias": "second-global"})
	if job := waitJob(t, admin, out["job_id"].(string)); job["status"] != "completed" {
		t.Fatalf("remove: %v", job)
	}
	if _, isErr := call(t, nora, "get_file_content", map[string]any{"repository_alias": "second-global", "file_path": "hello.txt"}); !isErr {
		t.Fatal("removed repository still readable")
	}
	if _, isErr := call(t, nora, "get_file_content", map[string]any{"repository_alias": "cidx-meta-global", "file_path": "second.md"}); !isErr {
		t.Fatal("catalog entry survived removal")
	}
}

func TestHelpToolsOnlyNameRealTools(t *testing.T) {
	e := setup(t)
	cs := e.connect(t, auth.NormalUser, "")
	visible := map[string]bool{}
	for _, i := range e.a.Registry.Visible(auth.NormalUser) {
		visible[i.Name] = true
	}
	cats := mustCall(t, cs, "get_tool_categories", nil)
	if int(cats["total_tools"].(float64)) != len(visible) {
		t.Errorf("total_tools %v, visible %d", cats["total_tools"], len(visible))
	}
	guide := mustCall(t, cs, "first_time_user_guide", nil)["guide"].(map[string]any)
	for _, s := range guide["steps"].([]any) {
		call := s.(map[string]any)["example_call"].(string)
		name := call[:strings.Index(call, "(")]
		if !visible[name] {
			t.Errorf("guide step uses %s, which this user cannot call", name)
		}
	}
	doc := mustCall(t, cs, "cidx_quick_reference", map[string]any{"tool": "get_file_content"})
	if d := doc["tools"].([]any)[0].(map[string]any)["doc"].(string); !strings.Contains(d, "TL;DR") {
		t.Errorf("full doc: %q", d)
	}
	if _, isErr := call(t, cs, "cidx_quick_reference", map[string]any{"tool": "create_user"}); !isErr {
		t.Error("quick reference documents a tool the caller may not use")
	}
	res, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "cidx://docs/tools/directory_tree"})
	if err != nil || !strings.Contains(res.Contents[0].Text, "TL;DR") {
		t.Errorf("doc resource: %v %v", res, err)
	}
}

func TestSettingsApplyToNextCallAndRejectBadValues(t *testing.T) {
	e := setup(t)
	admin := e.connect(t, auth.Admin, "")
	for _, bad := range []map[string]any{{"max_tokens_per_request": 999}, {"max_tokens_per_request": 20001}, {"chars_per_token": 6}, {"refresh_interval": 59}, {}} {
		if out, isErr := call(t, admin, "set_global_config", bad); !isErr {
			t.Errorf("set_global_config(%v) accepted: %v", bad, out)
		}
	}
	cfg := mustCall(t, admin, "get_global_config", nil)
	if cfg["max_tokens_per_request"].(float64) != 5000 || cfg["chars_per_token"].(float64) != 4 || cfg["refresh_interval"].(float64) != 3600 {
		t.Fatalf("a rejected update changed settings: %v", cfg)
	}
	mustCall(t, admin, "set_global_config", map[string]any{"chars_per_token": 3, "max_tokens_per_request": 1000})
	out := mustCall(t, admin, "get_file_content", map[string]any{"repository_alias": "demo-global", "file_path": "big.txt"})
	text := out["content"].([]any)[0].(map[string]any)["text"].(string)
	if len(text) > 3000 || len(text) < 2500 {
		t.Fatalf("page of %d bytes with a 3000-byte budget", len(text))
	}
}

// buildBinary builds cmd/cidx once per test binary run.
var buildBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "cidx-bin-*")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "cidx")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/cidx/cidx/cmd/cidx").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build: %v\n%s", err, out)
	}
	return bin, nil
})

func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestStdioServesTheBuiltBinary(t *testing.T) {
	bin := binary(t)
	data := t.TempDir()
	src := testutil.Repo(t, map[string]string{"a.go": "package a\n"})
	run := func(stdin string, args ...string) string {
		cmd := exec.Command(bin, append(args, "--data-dir", data)...)
		cmd.Stdin = strings.NewReader(stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("cidx %v: %v\n%s", args, err, stderr.String())
		}
		return stdout.String()
	}
	run("", "user", "add", "nora", "--role", "normal_user")
	if got := run("", "repo", "add", "demo", src); strings.TrimSpace(got) != "demo-global" {
		t.Fatalf("repo add printed %q", got)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: exec.Command(bin, "serve", "--stdio", "--user", "nora", "--data-dir", data)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	out := mustCall(t, cs, "whoami", nil)
	if out["username"] != "nora" {
		t.Fatalf("whoami over stdio: %v", out)
	}
	if slices.Contains(toolNames(t, cs), "list_users") {
		t.Fatal("stdio session as a normal user lists admin tools")
	}
	got := mustCall(t, cs, "get_file_content", map[string]any{"repository_alias": "demo-global", "file_path": "a.go"})
	if got["content"].([]any)[0].(map[string]any)["text"] != "package a\n" {
		t.Fatalf("read over stdio: %v", got)
	}
	// A token printed alone on stdout works while the stdio server runs.
	tok := strings.TrimSpace(run("", "token", "create", "nora", "--name", "ci"))
	if !strings.HasPrefix(tok, "cidx_") || strings.Contains(tok, "\n") {
		t.Fatalf("token create printed %q", tok)
	}
	if list := run("", "token", "list", "nora"); !strings.Contains(list, "ci") {
		t.Fatalf("token list: %s", list)
	}
}

func TestBadArgumentsAreToolErrors(t *testing.T) {
	e := setup(t)
	cs := e.connect(t, auth.NormalUser, "")
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"get_file_content", map[string]any{"repository_alias": "demo-global"}, `missing required arguments: ["file_path"]`},
		{"get_file_content", map[string]any{"repository_alias": "demo-global", "file_path": "main.go", "offset": 0}, `argument "offset": 0 is less than 1`},
		{"get_file_content", map[string]any{"repository_alias": "demo-global", "file_path": "main.go", "lines": 3}, `unknown arguments ["lines"]`},
		{"browse_directory", map[string]any{"repository_alias": "demo-global", "sort_by": "name"}, `argument "sort_by"`},
		{"list_files", map[string]any{"repository_alias": 7}, `argument "repository_alias"`},
		{"directory_tree", map[string]any{"repository_alias": "demo-global", "max_depth": 11}, `argument "max_depth": 11 is greater than 10`},
		{"global_repo_status", map[string]any{"alias": "demo"}, "-global"},
		{"cidx_quick_reference", map[string]any{"category": "nope"}, `unknown category "nope"`},
	}
	for _, c := range cases {
		out, isErr := call(t, cs, c.tool, c.args)
		if !isErr || out["success"] != false || !strings.Contains(out["error"].(string), c.want) {
			t.Errorf("%s(%v): want a tool error containing %q, got %v", c.tool, c.args, c.want, out)
		}
	}
}

// TestCLIWhileServing drives the command line against a data directory
// that a running HTTP server uses, as an admin would.
func TestCLIWhileServing(t *testing.T) {
	bin := binary(t)
	data := t.TempDir()
	src := testutil.Repo(t, map[string]string{"a.go": "package a\n"})
	ctx, cancel := context.WithCancel(context.Background())
	srv := exec.CommandContext(ctx, bin, "serve", "--http", "127.0.0.1:0", "--data-dir", data)
	stdout, _ := srv.StdoutPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); srv.Wait() }()
	var url, adminToken string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && (url == "" || adminToken == "") {
		line := sc.Text()
		if u, ok := strings.CutPrefix(line, "cidx "+app.Version+" serving MCP at "); ok {
			url = u
		}
		if tok, ok := strings.CutPrefix(line, "Admin token (shown once, store it now): "); ok {
			adminToken = tok
		}
	}
	go io.Copy(io.Discard, stdout)
	if url == "" || adminToken == "" {
		t.Fatal("serve did not print its URL and the admin token")
	}
	run := func(wantOK bool, stdin string, args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--data-dir", data)...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if (err == nil) != wantOK {
			t.Fatalf("cidx %v: err=%v\nstdout: %s\nstderr: %s", args, err, out.String(), errb.String())
		}
		return out.String(), errb.String()
	}
	session := func(token string) *sdk.ClientSession {
		c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}

	run(true, "Str0ng-Pazzw0rd!x\n", "user", "add", "nora", "--role", "normal_user", "--password-stdin")
	if _, stderr := run(false, "", "user", "add", "eve", "--role", "god"); !strings.Contains(stderr, "invalid role") {
		t.Errorf("bad role message: %s", stderr)
	}
	if _, stderr := run(false, "", "repo", "add", "../x", src); !strings.Contains(stderr, "invalid alias") {
		t.Errorf("bad alias message: %s", stderr)
	}
	tok, _ := run(true, "", "token", "create", "nora", "--name", "laptop")
	tok = strings.TrimSpace(tok)
	nora := session(tok)
	if out := mustCall(t, nora, "whoami", nil); out["username"] != "nora" {
		t.Fatalf("whoami: %v", out)
	}

	// --no-wait leaves the job to the running server.
	jobID, _ := run(true, "", "repo", "add", "demo", src, "--no-wait")
	admin := session(adminToken)
	if job := waitJob(t, admin, strings.TrimSpace(jobID)); job["status"] != "completed" {
		t.Fatalf("server did not run the queued job: %v", job)
	}
	got := mustCall(t, nora, "get_file_content", map[string]any{"repository_alias": "demo-global", "file_path": "a.go"})
	if got["content"].([]any)[0].(map[string]any)["text"] != "package a\n" {
		t.Fatalf("read: %v", got)
	}
	if list, _ := run(true, "", "repo", "list"); !strings.Contains(list, "demo-global") || !strings.Contains(list, "ready") {
		t.Errorf("repo list: %s", list)
	}
	if list, _ := run(true, "", "user", "list"); !strings.Contains(list, "nora") || !strings.Contains(list, "normal_user") {
		t.Errorf("user list: %s", list)
	}

	// Revoking from the CLI locks the token out of the running server
	// (within its one-second verification cache).
	list, _ := run(true, "", "token", "list", "nora")
	id := ""
	for _, f := range strings.Fields(list) {
		if strings.HasPrefix(f, "tok_") {
			id = f
		}
	}
	run(true, "", "token", "revoke", id)
	time.Sleep(1100 * time.Millisecond)
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	if _, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{tok, http.DefaultTransport}}}, nil); err == nil {
		t.Fatal("revoked token still connects")
	}
	run(true, "", "user", "remove", "nora")
	if _, stderr := run(false, "", "user", "remove", "admin"); !strings.Contains(stderr, "last admin") {
		t.Errorf("removing the last admin: %s", stderr)
	}
	run(true, "", "repo", "remove", "demo")
	if _, isErr := call(t, admin, "get_file_content", map[string]any{"repository_alias": "demo-global", "file_path": "a.go"}); !isErr {
		t.Fatal("removed repository still readable")
	}
}
