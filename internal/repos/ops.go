package repos

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cidx/cidx/internal/files"
	"github.com/cidx/cidx/internal/gitcli"
	"github.com/cidx/cidx/internal/jobs"
	"github.com/cidx/cidx/internal/store"
)

type jobParams struct {
	Alias string `json:"alias"`
}

// Add registers a golden repository and queues the job that clones and
// indexes it. Cheap checks (alias, source reachable, branch exists) run
// before anything is recorded, so a bad request changes nothing. branch ""
// means the source's default branch.
func (s *Service) Add(ctx context.Context, user, alias, source, branch string) (jobs.Job, error) {
	if err := ValidateAlias(alias); err != nil {
		return jobs.Job{}, err
	}
	if err := validateSource(source); err != nil {
		return jobs.Job{}, err
	}
	if branch != "" {
		if err := gitcli.ValidateBranch(branch); err != nil {
			return jobs.Job{}, &Error{Message: err.Error()}
		}
	}
	if _, err := s.Get(ctx, alias); err == nil {
		return jobs.Job{}, &Error{Message: fmt.Sprintf("Golden repository alias '%s' already exists", alias), Hint: "choose another alias, or use refresh_golden_repo to update it"}
	}
	if branch == "" {
		b, err := s.git.DefaultBranch(ctx, source)
		if err != nil {
			return jobs.Job{}, &Error{Message: fmt.Sprintf("Invalid or inaccessible git repository: %s (%v)", gitcli.Redact(source), err), Hint: "check the URL or path, and that the server can reach it without a password prompt"}
		}
		branch = b
	} else {
		ok, err := s.git.RemoteHasBranch(ctx, source, branch)
		if err != nil {
			return jobs.Job{}, &Error{Message: fmt.Sprintf("Invalid or inaccessible git repository: %s (%v)", gitcli.Redact(source), err), Hint: "check the URL or path, and that the server can reach it without a password prompt"}
		}
		if !ok {
			return jobs.Job{}, &Error{Message: fmt.Sprintf("branch %q does not exist in %s", branch, gitcli.Redact(source)), Hint: "omit the branch to use the repository's default branch"}
		}
	}
	_, err := s.exec(ctx, "INSERT INTO repos(alias, source, branch, state, created_at) VALUES(?, ?, ?, ?, ?)", alias, source, branch, StatePending, store.Now())
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") || strings.Contains(err.Error(), "PRIMARY") {
			return jobs.Job{}, &Error{Message: fmt.Sprintf("Golden repository alias '%s' already exists", alias)}
		}
		return jobs.Job{}, fmt.Errorf("register %s: %w", alias, err)
	}
	j, err := s.jobs.Submit(ctx, OpAdd, user, jobParams{Alias: alias})
	if err != nil {
		s.exec(context.WithoutCancel(ctx), "DELETE FROM repos WHERE alias = ?", alias)
		return jobs.Job{}, err
	}
	return j, nil
}

// Refresh queues a job that fetches the source and fast-forwards the
// repository to the branch's new tip.
func (s *Service) Refresh(ctx context.Context, user, alias string) (jobs.Job, error) {
	return s.transition(ctx, user, alias, OpRefresh, StateRefreshing, StateReady, StateFailed)
}

// Remove queues a job that deletes the repository, its snapshots and its
// catalog entry.
func (s *Service) Remove(ctx context.Context, user, alias string) (jobs.Job, error) {
	return s.transition(ctx, user, alias, OpRemove, StateRemoving, StateReady, StateFailed, StatePending, StateCloning, StateRefreshing)
}

// transition moves alias into state `to` if it is in one of `from`, then
// queues op. The conditional UPDATE makes two concurrent requests safe.
func (s *Service) transition(ctx context.Context, user, alias, op, to string, from ...string) (jobs.Job, error) {
	if ValidateAlias(alias) != nil {
		if base, ok := strings.CutSuffix(alias, GlobalSuffix); ok && ValidateAlias(base) == nil {
			alias = base // accept the -global name too: the contract's descriptions used it
		}
	}
	g, err := s.Get(ctx, alias)
	if err != nil {
		return jobs.Job{}, err
	}
	q := "UPDATE repos SET state = ? WHERE alias = ? AND state IN (?" + strings.Repeat(",?", len(from)-1) + ")"
	args := []any{to, alias}
	for _, f := range from {
		args = append(args, f)
	}
	res, err := s.exec(ctx, q, args...)
	if err != nil {
		return jobs.Job{}, fmt.Errorf("%s %s: %w", op, alias, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return jobs.Job{}, &Error{Message: fmt.Sprintf("repository '%s' is busy (state: %s)", alias, g.State), Hint: "wait for the running job to finish (get_job_details), then try again"}
	}
	j, err := s.jobs.Submit(ctx, op, user, jobParams{Alias: alias})
	if err != nil {
		s.exec(context.WithoutCancel(ctx), "UPDATE repos SET state = ? WHERE alias = ?", g.State, alias)
		return jobs.Job{}, err
	}
	return j, nil
}

func (s *Service) setState(ctx context.Context, alias, state, errMsg string) {
	s.exec(context.WithoutCancel(ctx), "UPDATE repos SET state = ?, error = ? WHERE alias = ?", state, errMsg, alias)
}

// AddResult is the result of an add or refresh job.
type AddResult struct {
	Alias   string `json:"alias"`
	Commit  string `json:"commit"`
	Message string `json:"message"`
	Files   int    `json:"files"`
	Changed bool   `json:"changed"`
}

func (s *Service) runAdd(ctx context.Context, raw json.RawMessage, progress jobs.Progress) (any, error) {
	var p jobParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	g, err := s.Get(ctx, p.Alias)
	if err != nil {
		return nil, err
	}
	s.setState(ctx, g.Alias, StateCloning, "")
	res, err := s.add(ctx, g, progress)
	var ie *indexError
	if errors.As(err, &ie) {
		return nil, fmt.Errorf("repository '%s' is readable but its search index failed: %w (retry with trigger_reindex)", g.Alias, ie.err)
	}
	if err != nil {
		// Leave nothing behind: the alias can be added again at once.
		os.RemoveAll(s.repoDir(g.Alias))
		s.exec(context.WithoutCancel(ctx), "DELETE FROM repos WHERE alias = ?", g.Alias)
		return nil, err
	}
	return res, nil
}

func (s *Service) add(ctx context.Context, g Golden, progress jobs.Progress) (*AddResult, error) {
	progress(5, "cloning "+gitcli.Redact(g.Source))
	if err := os.MkdirAll(s.repoDir(g.Alias), 0o755); err != nil {
		return nil, err
	}
	tmp := filepath.Join(s.repoDir(g.Alias), ".clone-"+strings.ToLower(rand.Text()[:8]))
	if err := s.git.CloneBare(ctx, g.Source, g.Branch, tmp); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("clone %s: %w", gitcli.Redact(g.Source), err)
	}
	if err := os.Rename(tmp, s.gitDir(g.Alias)); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	commit, err := s.git.ResolveCommit(ctx, s.gitDir(g.Alias), "refs/heads/"+g.Branch)
	if err != nil {
		return nil, err
	}
	progress(50, "checking out "+commit[:12])
	stats, err := s.snapshot(ctx, g.Alias, commit)
	if err != nil {
		return nil, err
	}
	if err := s.publish(ctx, g.Alias, commit, stats); err != nil {
		return nil, err
	}
	progress(60, "updating the catalog")
	if err := s.writeCatalog(ctx, g.Alias); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	if err := s.index(ctx, g.Alias, commit, false, progress, 62); err != nil {
		// The repository is readable; only search is missing. Keep it.
		return nil, &indexError{err}
	}
	// A catalog that cannot be indexed does not fail the repository: the
	// index records the error, and searching the catalog reports it.
	s.IndexCatalog(ctx)
	return &AddResult{Alias: g.Alias, Commit: commit, Files: stats.Files, Changed: true,
		Message: fmt.Sprintf("Golden repository '%s' added; read it as '%s'", g.Alias, g.GlobalAlias())}, nil
}

// snapshot checks commit out beside any existing snapshot and returns its stats.
func (s *Service) snapshot(ctx context.Context, alias, commit string) (Stats, error) {
	return s.snapshotFrom(ctx, alias, "", commit)
}

// maxIncremental is the most changed files a snapshot is derived from the
// previous one for; beyond it a full checkout is faster.
const maxIncremental = 300

// snapshotFrom makes the snapshot of commit, beside the existing ones, and
// returns its stats; prev ("" for none) is the snapshot it may be derived
// from.
func (s *Service) snapshotFrom(ctx context.Context, alias, prev, commit string) (Stats, error) {
	final := s.snapshotDir(alias, commit)
	if _, err := os.Stat(final); err == nil {
		return computeStats(final)
	}
	tmp := filepath.Join(filepath.Dir(final), ".tmp-"+commit+"-"+strings.ToLower(rand.Text()[:6]))
	if err := s.fill(ctx, alias, prev, commit, tmp); err != nil {
		os.RemoveAll(tmp)
		return Stats{}, err
	}
	stats, err := computeStats(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return Stats{}, err
	}
	if err := os.Rename(tmp, final); err != nil {
		os.RemoveAll(tmp)
		return Stats{}, err
	}
	return stats, nil
}

// fill writes the tree of commit into the new directory tmp. When prev's
// snapshot exists and few files changed, unchanged files are hard-linked
// from it (snapshots are never modified in place, so sharing inodes is
// safe) and the changed ones written from git; otherwise it is a full
// checkout.
func (s *Service) fill(ctx context.Context, alias, prev, commit, tmp string) error {
	if prev != "" {
		prevDir := s.snapshotDir(alias, prev)
		if _, err := os.Stat(prevDir); err == nil {
			changes, err := s.git.DiffTree(ctx, s.gitDir(alias), prev, commit)
			if err == nil && len(changes) <= maxIncremental {
				if err := linkTree(prevDir, tmp); err == nil {
					if err := s.applyChanges(ctx, alias, tmp, changes); err != nil {
						return fmt.Errorf("update snapshot to %s: %w", commit, err)
					}
					return nil
				}
				os.RemoveAll(tmp)
			}
		}
	}
	if err := s.git.Checkout(ctx, s.gitDir(alias), commit, tmp); err != nil {
		return fmt.Errorf("check out %s: %w", commit, err)
	}
	return nil
}

// linkTree recreates src's directories and symlinks in dst and hard-links
// its files. Both are snapshot directories cidx made, not user paths.
func linkTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		default:
			return os.Link(p, target)
		}
	})
}

// applyChanges removes, adds and replaces files in dir (through os.Root:
// paths come from the repository) to match the changes.
func (s *Service) applyChanges(ctx context.Context, alias, dir string, changes []gitcli.Change) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, c := range changes {
		// Never write through a shared inode: unlink first, then create.
		if err := root.Remove(c.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if c.Status == 'D' || c.Mode == "160000" {
			continue
		}
		if d := path.Dir(c.Path); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		data, err := s.git.Blob(ctx, s.gitDir(alias), c.Blob)
		if err != nil {
			return err
		}
		if c.Mode == "120000" {
			if err := root.Symlink(string(data), c.Path); err != nil {
				return err
			}
			continue
		}
		perm := os.FileMode(0o644)
		if c.Mode == "100755" {
			perm = 0o755
		}
		if err := root.WriteFile(c.Path, data, perm); err != nil {
			return err
		}
	}
	return nil
}

// publish makes commit the one readers see.
func (s *Service) publish(ctx context.Context, alias, commit string, stats Stats) error {
	b, _ := json.Marshal(stats)
	_, err := s.exec(ctx, "UPDATE repos SET state = ?, commit_id = ?, stats = ?, last_refresh = ?, error = '' WHERE alias = ?",
		StateReady, commit, string(b), store.Now(), alias)
	return err
}

func (s *Service) runRefresh(ctx context.Context, raw json.RawMessage, progress jobs.Progress) (any, error) {
	var p jobParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	g, err := s.Get(ctx, p.Alias)
	if err != nil {
		return nil, err
	}
	res, err := s.refresh(ctx, g, progress)
	if err != nil {
		state := StateReady
		if g.Commit == "" {
			state = StateFailed
		}
		s.setState(ctx, g.Alias, state, err.Error())
		return nil, err
	}
	return res, nil
}

func (s *Service) refresh(ctx context.Context, g Golden, progress jobs.Progress) (*AddResult, error) {
	gitDir := s.gitDir(g.Alias)
	progress(10, "fetching "+gitcli.Redact(g.Source))
	if err := s.git.FetchRemote(ctx, gitDir, g.Source, g.Branch); err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	tip, err := s.git.ResolveCommit(ctx, gitDir, "refs/remotes/origin/"+g.Branch)
	if err != nil {
		return nil, err
	}
	if g.Commit != "" && tip != g.Commit {
		ff, err := s.git.IsAncestor(ctx, gitDir, g.Commit, tip)
		if err != nil {
			return nil, err
		}
		if !ff {
			return nil, &Error{Message: fmt.Sprintf("branch %s of %s was rewritten upstream: %s is not a fast-forward of %s", g.Branch, gitcli.Redact(g.Source), tip[:12], g.Commit[:12]),
				Hint: "the repository keeps serving " + g.Commit[:12] + "; remove and add it again to follow the rewritten history"}
		}
	}
	if err := s.git.UpdateRef(ctx, gitDir, "refs/heads/"+g.Branch, tip); err != nil {
		return nil, err
	}
	if tip == g.Commit {
		if err := s.publish(ctx, g.Alias, g.Commit, g.Stats); err != nil {
			return nil, err
		}
		return &AddResult{Alias: g.Alias, Commit: tip, Files: g.Stats.Files, Message: "already up to date"}, nil
	}
	progress(40, "checking out "+tip[:12])
	stats, err := s.snapshotFrom(ctx, g.Alias, g.Commit, tip)
	if err != nil {
		return nil, err
	}
	if err := s.publish(ctx, g.Alias, tip, stats); err != nil {
		return nil, err
	}
	progress(60, "updating the catalog")
	if err := s.writeCatalog(ctx, g.Alias); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	if err := s.index(ctx, g.Alias, tip, false, progress, 62); err != nil {
		// Old snapshots stay: the index still published may point at them.
		return nil, fmt.Errorf("updated to %s, but indexing it failed (get_index_status tells what search serves): %w", tip[:12], err)
	}
	// The index now reads tip; the previous snapshot stays for reads
	// that resolved it just before the switch.
	s.pruneSnapshots(g.Alias, tip, g.Commit)
	s.IndexCatalog(ctx)
	return &AddResult{Alias: g.Alias, Commit: tip, Files: stats.Files, Changed: true, Message: fmt.Sprintf("updated to %s", tip[:12])}, nil
}

// indexError marks a failure of the index step, after the repository
// itself was published.
type indexError struct{ err error }

func (e *indexError) Error() string { return e.err.Error() }

// index builds the search index of commit, reporting progress from
// `from` to 99.
func (s *Service) index(ctx context.Context, alias, commit string, full bool, progress jobs.Progress, from int) error {
	if s.indexer == nil {
		return nil
	}
	return s.indexer.IndexCommit(ctx, alias, commit, s.snapshotDir(alias, commit), s.gitDir(alias), full, func(p int, msg string) {
		progress(from+p*(99-from)/100, msg)
	})
}

// Reindex queues a job that rebuilds alias's search index at its current
// commit; full ignores the previous build.
func (s *Service) Reindex(ctx context.Context, user, alias string, full bool) (jobs.Job, error) {
	if ValidateAlias(alias) != nil {
		if base, ok := strings.CutSuffix(alias, GlobalSuffix); ok && ValidateAlias(base) == nil {
			alias = base
		}
	}
	g, err := s.Get(ctx, alias)
	if err != nil {
		return jobs.Job{}, err
	}
	res, err := s.exec(ctx, "UPDATE repos SET state = ? WHERE alias = ? AND state = ?", StateRefreshing, alias, StateReady)
	if err != nil {
		return jobs.Job{}, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return jobs.Job{}, &Error{Message: fmt.Sprintf("repository '%s' is busy (state: %s)", alias, g.State), Hint: "wait for the running job to finish (get_job_details), then try again"}
	}
	j, err := s.jobs.Submit(ctx, OpReindex, user, reindexParams{Alias: alias, Full: full})
	if err != nil {
		s.setState(ctx, alias, StateReady, "")
		return jobs.Job{}, err
	}
	return j, nil
}

type reindexParams struct {
	Alias string `json:"alias"`
	Full  bool   `json:"full"`
}

func (s *Service) runReindex(ctx context.Context, raw json.RawMessage, progress jobs.Progress) (any, error) {
	var p reindexParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	g, err := s.Get(ctx, p.Alias)
	if err != nil {
		return nil, err
	}
	defer s.setState(ctx, g.Alias, StateReady, "")
	if err := s.index(ctx, g.Alias, g.Commit, p.Full, progress, 1); err != nil {
		return nil, err
	}
	return &AddResult{Alias: g.Alias, Commit: g.Commit, Files: g.Stats.Files, Changed: true, Message: "reindexed at " + short(g.Commit)}, nil
}

// pruneSnapshots deletes snapshots other than the listed ones. The previous
// one is kept so that reads that resolved it just before the switch finish.
func (s *Service) pruneSnapshots(alias string, keep ...string) {
	dir := filepath.Join(s.repoDir(alias), "snapshots")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".tmp-") || !containsStr(keep, name) {
			os.RemoveAll(filepath.Join(dir, name))
		}
	}
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// RemoveResult is the result of a remove job.
type RemoveResult struct {
	Alias   string `json:"alias"`
	Message string `json:"message"`
}

func (s *Service) runRemove(ctx context.Context, raw json.RawMessage, progress jobs.Progress) (any, error) {
	var p jobParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	progress(10, "removing the catalog entry")
	if s.indexer != nil {
		if err := s.indexer.Forget(ctx, p.Alias); err != nil {
			return nil, err
		}
	}
	if err := os.Remove(filepath.Join(s.meta, p.Alias+".md")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	progress(40, "deleting files")
	// Move the files aside before dropping the record, so that the alias,
	// once free, can be added again without its new files being deleted.
	trash := filepath.Join(s.dir, ".trash-"+p.Alias+"-"+strings.ToLower(rand.Text()[:8]))
	if err := os.Rename(s.repoDir(p.Alias), trash); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if _, err := s.exec(ctx, "DELETE FROM repos WHERE alias = ?", p.Alias); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(trash); err != nil {
		return nil, err
	}
	s.IndexCatalog(ctx)
	return &RemoveResult{Alias: p.Alias, Message: fmt.Sprintf("Golden repository '%s' removed", p.Alias)}, nil
}

// computeStats walks a snapshot that cidx itself checked out (not a user
// path) and sums files and bytes per language.
func computeStats(dir string) (Stats, error) {
	byLang := map[string]*LanguageShare{}
	var st Stats
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st.Files++
		st.Bytes += info.Size()
		lang := "other"
		if l := files.Language(path); l != nil {
			lang = *l
		}
		ls := byLang[lang]
		if ls == nil {
			ls = &LanguageShare{Language: lang}
			byLang[lang] = ls
		}
		ls.Files++
		ls.Bytes += info.Size()
		return nil
	})
	if err != nil {
		return st, fmt.Errorf("scan snapshot: %w", err)
	}
	st.Languages = []LanguageShare{}
	for _, ls := range byLang {
		st.Languages = append(st.Languages, *ls)
	}
	sort.Slice(st.Languages, func(i, j int) bool {
		a, b := st.Languages[i], st.Languages[j]
		if a.Bytes != b.Bytes {
			return a.Bytes > b.Bytes
		}
		return a.Language < b.Language
	})
	return st, nil
}
