// Package gitcli is cidx's only way to run git. Commands are argument lists
// (never a shell), run with a timeout and an output cap, with a scrubbed
// environment: no terminal prompts, no system or global config, no hooks,
// no ext:: transport. Callers put "--" before paths and "--end-of-options"
// before user-supplied refs; the typed helpers here do so.
package gitcli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// Runner runs git.
type Runner struct {
	// Git is the git binary; "git" when empty.
	Git string
	// Timeout bounds each call; 2 minutes when zero.
	Timeout time.Duration
	// MaxOutput caps captured standard output; 64 MiB when zero.
	MaxOutput int
}

// Default is a Runner with default limits.
var Default = &Runner{}

// Error is a failed git command, with git's own message.
type Error struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	// Keep the first lines only: git can be verbose.
	if lines := strings.SplitN(msg, "\n", 4); len(lines) > 3 {
		msg = strings.Join(lines[:3], "\n") + "\n..."
	}
	return fmt.Sprintf("git %s: %s", e.subcommand(), redact(msg))
}

func (e *Error) Unwrap() error { return e.Err }

// subcommand is the git command that failed, without options (which may
// hold server paths).
func (e *Error) subcommand() string {
	for _, a := range e.Args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return "command"
}

// ErrOutputTooLarge is returned when a command prints more than MaxOutput.
var ErrOutputTooLarge = errors.New("git output exceeds the limit")

// safety options applied to every call: they neutralise repository or
// server configuration that could run programs.
var safety = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "protocol.ext.allow=never",
	"-c", "core.sshCommand=ssh -o BatchMode=yes",
	"-c", "credential.helper=",
	"-c", "core.askPass=",
}

func (r *Runner) env() []string {
	env := []string{
		"GIT_TERMINAL_PROMPT=0",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_ASKPASS=/bin/true",
		"SSH_ASKPASS=/bin/true",
		"LC_ALL=C",
	}
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "SSH_AUTH_SOCK", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Run runs git with args in dir ("" for the current directory) and returns
// its standard output.
func (r *Runner) Run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return r.run(ctx, dir, nil, args...)
}

func (r *Runner) run(ctx context.Context, dir string, extraEnv []string, args ...string) ([]byte, error) {
	timeout := r.Timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	max := r.MaxOutput
	if max == 0 {
		max = 64 << 20
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	git := r.Git
	if git == "" {
		git = "git"
	}
	full := append(append([]string{}, safety...), args...)
	cmd := exec.CommandContext(ctx, git, full...)
	cmd.Dir = dir
	cmd.Env = append(r.env(), extraEnv...)
	stdout := &capped{max: max}
	stderr := &capped{max: 64 << 10}
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if stdout.over {
		return stdout.buf.Bytes(), &Error{Args: args, Stderr: "", Err: ErrOutputTooLarge}
	}
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("timed out after %s: %w", timeout, ctx.Err())
		}
		return stdout.buf.Bytes(), &Error{Args: args, Stderr: stderr.buf.String(), Err: err}
	}
	return stdout.buf.Bytes(), nil
}

type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if c.buf.Len()+len(p) > c.max {
		c.over = true
		c.buf.Write(p[:max(0, c.max-c.buf.Len())])
		return len(p), nil
	}
	return c.buf.Write(p)
}

var credRE = regexp.MustCompile(`(://)[^/@\s]+@`)

// redact hides credentials embedded in URLs (https://user:secret@host).
func redact(s string) string { return credRE.ReplaceAllString(s, "$1***@") }

// Redact hides credentials embedded in a URL so it can be logged or shown.
func Redact(url string) string { return redact(url) }

var refRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,254}$`)

// ValidateBranch checks a branch name supplied by a user: it must look like
// a plain ref name and can never be read as an option.
func ValidateBranch(b string) error {
	if !refRE.MatchString(b) || strings.Contains(b, "..") || strings.HasSuffix(b, ".lock") || strings.HasSuffix(b, "/") || strings.Contains(b, "//") {
		return fmt.Errorf("invalid branch name %q: use letters, digits, '.', '_', '-' and '/', e.g. \"main\"", b)
	}
	return nil
}

// long returns a copy of r for network transfers of whole repositories,
// which may take far longer than other commands.
func (r *Runner) long() *Runner {
	rr := *r
	if rr.Timeout < 30*time.Minute {
		rr.Timeout = 30 * time.Minute
	}
	return &rr
}

// LsRemote checks that url is a reachable git repository.
func (r *Runner) LsRemote(ctx context.Context, url string) error {
	_, err := r.Run(ctx, "", "ls-remote", "--heads", "--", url)
	return err
}

// RemoteHasBranch reports whether url has branch.
func (r *Runner) RemoteHasBranch(ctx context.Context, url, branch string) (bool, error) {
	out, err := r.Run(ctx, "", "ls-remote", "--heads", "--", url, "refs/heads/"+branch)
	if err != nil {
		return false, err
	}
	return len(bytes.TrimSpace(out)) > 0, nil
}

// CloneBare makes a bare clone of url's branch into dst.
func (r *Runner) CloneBare(ctx context.Context, url, branch, dst string) error {
	_, err := r.long().Run(ctx, "", "clone", "--bare", "--single-branch", "--no-tags", "--branch="+branch, "--", url, dst)
	return err
}

// Fetch updates the branch in a bare clone made by CloneBare to the remote's tip.
func (r *Runner) Fetch(ctx context.Context, gitDir, branch string) error {
	_, err := r.long().Run(ctx, "", "--git-dir="+gitDir, "fetch", "--no-tags", "--prune", "origin", "+refs/heads/"+branch+":refs/heads/"+branch)
	return err
}

// ResolveCommit returns the full commit id of rev in gitDir.
func (r *Runner) ResolveCommit(ctx context.Context, gitDir, rev string) (string, error) {
	out, err := r.Run(ctx, "", "--git-dir="+gitDir, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("resolve %q: %w", rev, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// IsAncestor reports whether a is an ancestor of b.
func (r *Runner) IsAncestor(ctx context.Context, gitDir, a, b string) (bool, error) {
	_, err := r.Run(ctx, "", "--git-dir="+gitDir, "merge-base", "--is-ancestor", a, b)
	if err == nil {
		return true, nil
	}
	var ge *Error
	if errors.As(err, &ge) {
		var ee *exec.ExitError
		if errors.As(ge.Err, &ee) && ee.ExitCode() == 1 {
			return false, nil
		}
	}
	return false, err
}

// Checkout writes the tree of commit into dst, a new directory, without a
// .git entry: snapshots are plain, immutable directories.
func (r *Runner) Checkout(ctx context.Context, gitDir, commit, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	// A throwaway index keeps the bare repository's own state untouched.
	idx, err := os.CreateTemp("", "cidx-index-*")
	if err != nil {
		return err
	}
	idx.Close()
	os.Remove(idx.Name())
	defer os.Remove(idx.Name())
	run := func(args ...string) error {
		cmd := append([]string{"--git-dir=" + gitDir, "--work-tree=" + dst}, args...)
		_, err := r.run(ctx, "", []string{"GIT_INDEX_FILE=" + idx.Name()}, cmd...)
		return err
	}
	if err := run("read-tree", commit); err != nil {
		return err
	}
	return run("checkout-index", "--all", "--force")
}

// Commit is one commit's summary.
type Commit struct {
	Hash    string `json:"hash"`
	Author  string `json:"author"`
	Date    string `json:"date"`
	Subject string `json:"subject"`
}

// LastCommit returns the commit at rev.
func (r *Runner) LastCommit(ctx context.Context, gitDir, rev string) (Commit, error) {
	out, err := r.Run(ctx, "", "--git-dir="+gitDir, "log", "-1", "--format=%H%x00%an%x00%aI%x00%s", "--end-of-options", rev)
	if err != nil {
		return Commit{}, err
	}
	parts := strings.SplitN(strings.TrimRight(string(out), "\n"), "\x00", 4)
	if len(parts) != 4 {
		return Commit{}, fmt.Errorf("git log: unexpected output")
	}
	return Commit{Hash: parts[0], Author: parts[1], Date: parts[2], Subject: parts[3]}, nil
}

// DefaultBranch returns the branch HEAD points to at url.
func (r *Runner) DefaultBranch(ctx context.Context, url string) (string, error) {
	out, err := r.Run(ctx, "", "ls-remote", "--symref", "--", url, "HEAD")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "ref: refs/heads/"); ok {
			if b, _, ok := strings.Cut(rest, "\t"); ok {
				return b, nil
			}
		}
	}
	return "", errors.New("the repository has no default branch (is it empty?)")
}

// FetchRemote fetches branch from url into refs/remotes/origin/BRANCH.
func (r *Runner) FetchRemote(ctx context.Context, gitDir, url, branch string) error {
	_, err := r.long().Run(ctx, "", "--git-dir="+gitDir, "fetch", "--no-tags", "--", url, "+refs/heads/"+branch+":refs/remotes/origin/"+branch)
	return err
}

// UpdateRef points ref at commit.
func (r *Runner) UpdateRef(ctx context.Context, gitDir, ref, commit string) error {
	_, err := r.Run(ctx, "", "--git-dir="+gitDir, "update-ref", ref, commit)
	return err
}

// TreeEntry is one file of a commit's tree.
type TreeEntry struct {
	Mode string
	Blob string
	Size int64
	Path string
}

// ListTree returns the regular files (not symlinks or submodules) of
// commit, with their blob ids and sizes.
func (r *Runner) ListTree(ctx context.Context, gitDir, commit string) ([]TreeEntry, error) {
	out, err := r.Run(ctx, "", "--git-dir="+gitDir, "ls-tree", "-r", "-l", "-z", "--full-tree", "--end-of-options", commit)
	if err != nil {
		return nil, err
	}
	var entries []TreeEntry
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			return nil, fmt.Errorf("git ls-tree: unexpected record %q", rec)
		}
		f := strings.Fields(string(meta))
		if len(f) != 4 || f[1] != "blob" || (f[0] != "100644" && f[0] != "100755") {
			continue
		}
		var size int64
		fmt.Sscan(f[3], &size)
		entries = append(entries, TreeEntry{Mode: f[0], Blob: f[2], Size: size, Path: string(path)})
	}
	return entries, nil
}

// Change is one file changed between two commits.
type Change struct {
	Status byte   // 'A', 'M', 'D', 'T' (type change)
	Mode   string // new mode ("100644", "100755", "120000", "160000"; "000000" when deleted)
	Blob   string // new blob id
	Path   string
}

// DiffTree lists the files that differ between commits a and b.
func (r *Runner) DiffTree(ctx context.Context, gitDir, a, b string) ([]Change, error) {
	out, err := r.Run(ctx, "", "--git-dir="+gitDir, "diff-tree", "-r", "-z", "--no-renames", "--raw", a, b)
	if err != nil {
		return nil, err
	}
	var changes []Change
	recs := bytes.Split(out, []byte{0})
	for i := 0; i+1 < len(recs); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(string(recs[i]), ":"))
		if len(meta) != 5 {
			return nil, fmt.Errorf("git diff-tree: unexpected record %q", recs[i])
		}
		changes = append(changes, Change{Status: meta[4][0], Mode: meta[1], Blob: meta[3], Path: string(recs[i+1])})
	}
	return changes, nil
}

// Blob returns the content of blob id.
func (r *Runner) Blob(ctx context.Context, gitDir, id string) ([]byte, error) {
	return r.Run(ctx, "", "--git-dir="+gitDir, "cat-file", "blob", id)
}
