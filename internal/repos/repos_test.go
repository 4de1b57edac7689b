package repos_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cidx/cidx/internal/gitcli"
	"github.com/cidx/cidx/internal/jobs"
	"github.com/cidx/cidx/internal/repos"
	"github.com/cidx/cidx/internal/store"
	"github.com/cidx/cidx/internal/testutil"
)

func newService(t *testing.T) (*repos.Service, *jobs.Manager, string) {
	t.Helper()
	ctx := context.Background()
	data := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(data, "cidx.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	jm := jobs.NewManager(db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	s, err := repos.NewService(db, jm, gitcli.Default, data)
	if err != nil {
		t.Fatal(err)
	}
	return s, jm, data
}

func run(t *testing.T, jm *jobs.Manager, j jobs.Job) jobs.Job {
	t.Helper()
	done, err := jm.RunNow(context.Background(), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	return done
}

func mustAdd(t *testing.T, s *repos.Service, jm *jobs.Manager, alias, src string) {
	t.Helper()
	j, err := s.Add(context.Background(), "admin", alias, src, "")
	if err != nil {
		t.Fatal(err)
	}
	if done := run(t, jm, j); done.Status != jobs.Completed {
		t.Fatalf("add job: %s %v", done.Status, *done.Error)
	}
}

func TestAddResolveRefreshRemove(t *testing.T) {
	ctx := context.Background()
	s, jm, data := newService(t)
	src := testutil.Repo(t, map[string]string{
		"README.md":   "# Demo\n\nDemo is a tiny service that greets people.\n\nMore text.\n",
		"main.go":     "package main\n\nfunc main() {}\n",
		"lib/util.py": "def f():\n    return 1\n",
	})
	mustAdd(t, s, jm, "demo", src)

	snap, err := s.Resolve(ctx, "demo-global")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(snap.Dir, "main.go")); err != nil || !strings.Contains(string(b), "func main") {
		t.Fatalf("snapshot main.go: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(snap.Dir, ".git")); !os.IsNotExist(err) {
		t.Fatalf("snapshot must not contain .git: %v", err)
	}
	head := strings.TrimSpace(testutil.Git(t, src, "rev-parse", "HEAD"))
	if snap.Commit != head {
		t.Fatalf("commit %s, want %s", snap.Commit, head)
	}
	g, _ := s.Get(ctx, "demo")
	if g.Stats.Files != 3 || g.Branch != "main" {
		t.Fatalf("stats/branch: %+v", g)
	}

	catalog := filepath.Join(data, "meta", "demo.md")
	c1, err := os.ReadFile(catalog)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"name: demo", "alias: demo-global", "default_branch: main", "last_commit: " + head, "Demo is a tiny service that greets people.", "| go |", "`lib/` (1 files)", "`README.md`"} {
		if !strings.Contains(string(c1), want) {
			t.Errorf("catalog lacks %q:\n%s", want, c1)
		}
	}

	// Refresh with no change keeps everything, including the catalog bytes.
	j, err := s.Refresh(ctx, "admin", "demo")
	if err != nil {
		t.Fatal(err)
	}
	if done := run(t, jm, j); done.Status != jobs.Completed || !strings.Contains(string(done.Result), "already up to date") {
		t.Fatalf("no-op refresh: %+v %s", done, done.Result)
	}

	// A new upstream commit is served after refresh; the old snapshot stays readable until the next one.
	testutil.Commit(t, src, "second", map[string]string{"main.go": "package main\n\nfunc main() { println(2) }\n"})
	j, err = s.Refresh(ctx, "admin", "demo-global") // -global accepted too
	if err != nil {
		t.Fatal(err)
	}
	if done := run(t, jm, j); done.Status != jobs.Completed {
		t.Fatalf("refresh: %+v", done)
	}
	snap2, _ := s.Resolve(ctx, "demo-global")
	if snap2.Commit == snap.Commit {
		t.Fatal("refresh did not move the commit")
	}
	if b, _ := os.ReadFile(filepath.Join(snap2.Dir, "main.go")); !strings.Contains(string(b), "println(2)") {
		t.Fatalf("new snapshot content: %q", b)
	}
	if _, err := os.Stat(snap.Dir); err != nil {
		t.Fatalf("previous snapshot removed too early: %v", err)
	}
	c2, _ := os.ReadFile(catalog)
	if !strings.Contains(string(c2), "second") {
		t.Errorf("catalog not updated:\n%s", c2)
	}

	// Remove deletes files, catalog entry and the alias.
	j, err = s.Remove(ctx, "admin", "demo")
	if err != nil {
		t.Fatal(err)
	}
	if done := run(t, jm, j); done.Status != jobs.Completed {
		t.Fatalf("remove: %+v", done)
	}
	if _, err := s.Resolve(ctx, "demo-global"); err == nil {
		t.Fatal("removed repository still resolves")
	}
	if _, err := os.Stat(catalog); !os.IsNotExist(err) {
		t.Fatal("catalog entry left behind")
	}
	if _, err := os.Stat(filepath.Join(data, "repos", "demo")); !os.IsNotExist(err) {
		t.Fatal("repository directory left behind")
	}
}

func TestRefreshRefusesRewrittenHistory(t *testing.T) {
	ctx := context.Background()
	s, jm, _ := newService(t)
	src := testutil.Repo(t, map[string]string{"a.txt": "one\n"})
	testutil.Commit(t, src, "two", map[string]string{"a.txt": "two\n"})
	mustAdd(t, s, jm, "demo", src)
	before, _ := s.Resolve(ctx, "demo-global")
	testutil.Git(t, src, "reset", "-q", "--hard", "HEAD~1")
	testutil.Commit(t, src, "rewritten", map[string]string{"a.txt": "other\n"})
	j, err := s.Refresh(ctx, "admin", "demo")
	if err != nil {
		t.Fatal(err)
	}
	done := run(t, jm, j)
	if done.Status != jobs.Failed || !strings.Contains(*done.Error, "not a fast-forward") {
		t.Fatalf("want fast-forward failure, got %s %v", done.Status, done.Error)
	}
	after, err := s.Resolve(ctx, "demo-global")
	if err != nil || after.Commit != before.Commit {
		t.Fatalf("must keep serving %s, got %+v %v", before.Commit, after, err)
	}
	g, _ := s.Get(ctx, "demo")
	if g.State != repos.StateReady {
		t.Fatalf("state after failed refresh: %s", g.State)
	}
}

func TestAddRejectsBadInputWithoutSideEffects(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newService(t)
	src := testutil.Repo(t, map[string]string{"a.txt": "x\n"})
	cases := []struct{ alias, src, branch, want string }{
		{"../evil", src, "", "invalid alias"},
		{"a/b", src, "", "invalid alias"},
		{"x-global", src, "", "do not include"},
		{"cidx-meta", src, "", "reserved"},
		{"ok", "--upload-pack=touch /tmp/pwned", "", "must not start with '-'"},
		{"ok", "ext::sh -c touch% /tmp/pwned", "", "not allowed"},
		{"ok", filepath.Join(t.TempDir(), "missing"), "", "Invalid or inaccessible"},
		{"ok", src, "nope", "does not exist"},
		{"ok", src, "-x", "invalid branch"},
	}
	for _, c := range cases {
		_, err := s.Add(ctx, "admin", c.alias, c.src, c.branch)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Add(%q, %q, %q) = %v, want error containing %q", c.alias, c.src, c.branch, err, c.want)
		}
	}
	if all, _ := s.List(ctx); len(all) != 0 {
		t.Fatalf("rejected adds left records: %+v", all)
	}
}

func TestAddDuplicateAndUnknown(t *testing.T) {
	ctx := context.Background()
	s, jm, _ := newService(t)
	src := testutil.Repo(t, map[string]string{"a.txt": "x\n"})
	mustAdd(t, s, jm, "demo", src)
	if _, err := s.Add(ctx, "admin", "demo", src, ""); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("duplicate: %v", err)
	}
	_, err := s.Resolve(ctx, "dmeo-global")
	var re *repos.Error
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("unknown: %v", err)
	}
	re = err.(*repos.Error)
	b, _ := json.Marshal(re.Details)
	if !strings.Contains(string(b), `"suggestions":["demo-global"`) {
		t.Fatalf("suggestions: %s", b)
	}
	if _, err := s.Refresh(ctx, "admin", "nope"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("refresh unknown: %v", err)
	}
}

func TestCloneFailureLeavesNothing(t *testing.T) {
	ctx := context.Background()
	s, jm, data := newService(t)
	src := testutil.Repo(t, map[string]string{"a.txt": "x\n"})
	j, err := s.Add(ctx, "admin", "demo", src, "")
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(src) // the source vanishes between the check and the clone
	done := run(t, jm, j)
	if done.Status != jobs.Failed {
		t.Fatalf("want failure, got %s", done.Status)
	}
	if _, err := s.Get(ctx, "demo"); err == nil {
		t.Fatal("failed add left a record")
	}
	if _, err := os.Stat(filepath.Join(data, "repos", "demo")); !os.IsNotExist(err) {
		t.Fatal("failed add left files")
	}
}

func TestExpand(t *testing.T) {
	ctx := context.Background()
	s, jm, _ := newService(t)
	src := testutil.Repo(t, map[string]string{"a.txt": "x\n"})
	mustAdd(t, s, jm, "alpha", src)
	mustAdd(t, s, jm, "beta", src)
	got, err := s.Expand(ctx, []string{"beta-global", "*-global", "missing-global"})
	if err != nil {
		t.Fatal(err)
	}
	want := "beta-global,alpha-global,cidx-meta-global,missing-global"
	if strings.Join(got, ",") != want {
		t.Fatalf("Expand = %v, want %s", got, want)
	}
}

// TestRefreshSnapshotIsIncrementalAndExact checks that a snapshot derived
// from the previous one (hard links plus the changes) equals the commit's
// tree, and that the previous snapshot is left untouched.
func TestRefreshSnapshotIsIncrementalAndExact(t *testing.T) {
	ctx := context.Background()
	s, jm, _ := newService(t)
	src := testutil.Repo(t, map[string]string{"keep.txt": "same\n", "mod.txt": "old\n", "gone.txt": "bye\n", "dir/a.txt": "a\n"})
	mustAdd(t, s, jm, "demo", src)
	old, _ := s.Resolve(ctx, "demo-global")
	os.Remove(filepath.Join(src, "gone.txt"))
	os.Symlink("keep.txt", filepath.Join(src, "link"))
	os.WriteFile(filepath.Join(src, "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	testutil.Commit(t, src, "change", map[string]string{"mod.txt": "new\n", "new/deep/b.txt": "b\n"})
	j, err := s.Refresh(ctx, "admin", "demo")
	if err != nil {
		t.Fatal(err)
	}
	if done := run(t, jm, j); done.Status != jobs.Completed {
		t.Fatalf("refresh: %+v", done)
	}
	cur, _ := s.Resolve(ctx, "demo-global")
	read := func(dir, p string) string {
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			return "<missing>"
		}
		return string(b)
	}
	for p, want := range map[string]string{"keep.txt": "same\n", "mod.txt": "new\n", "gone.txt": "<missing>", "dir/a.txt": "a\n", "new/deep/b.txt": "b\n", "link": "same\n"} {
		if got := read(cur.Dir, p); got != want {
			t.Errorf("new snapshot %s = %q, want %q", p, got, want)
		}
	}
	if l, err := os.Readlink(filepath.Join(cur.Dir, "link")); err != nil || l != "keep.txt" {
		t.Errorf("symlink: %q %v", l, err)
	}
	if st, err := os.Stat(filepath.Join(cur.Dir, "run.sh")); err != nil || st.Mode().Perm()&0o100 == 0 {
		t.Errorf("executable bit lost: %v %v", st, err)
	}
	for p, want := range map[string]string{"mod.txt": "old\n", "gone.txt": "bye\n", "new/deep/b.txt": "<missing>"} {
		if got := read(old.Dir, p); got != want {
			t.Errorf("old snapshot %s = %q, want %q (it must not change)", p, got, want)
		}
	}
	// Unchanged files share storage with the previous snapshot.
	a, _ := os.Stat(filepath.Join(old.Dir, "keep.txt"))
	b, _ := os.Stat(filepath.Join(cur.Dir, "keep.txt"))
	if !os.SameFile(a, b) {
		t.Error("unchanged file was copied, not linked")
	}
}
