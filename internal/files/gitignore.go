package files

import (
	"io"
	"strings"
)

// gitignore holds the rules of one .gitignore file, which this package reads
// only at the repository root (as the contract's list_files does); nested
// .gitignore files and .git/info/exclude are not consulted.
//
// Supported: comments, blank lines, "!" negation, trailing "/" for
// directories only, leading "/" and inner "/" anchoring, "**", "*", "?",
// "[...]" classes, "\" escapes and trailing-space trimming. Not supported:
// POSIX character classes such as "[[:space:]]".
type gitignore struct{ rules []rule }

// maxGitignoreBytes bounds how much of a .gitignore is read.
const maxGitignoreBytes = 1 << 20

func parseGitignore(text string) *gitignore {
	g := &gitignore{}
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
			line = line[:len(line)-1]
		}
		if line == "" || line[0] == '#' {
			continue
		}
		negate := line[0] == '!'
		if negate {
			line = line[1:]
		}
		// "\#" and "\!" reach the glob as escapes of a literal character.
		if strings.Trim(line, "/") == "" {
			continue
		}
		r := newRule(line)
		r.negate = negate
		g.rules = append(g.rules, r)
	}
	return g
}

// match reports whether the rules ignore the clean path p itself; the last
// matching rule decides. Callers walking a tree skip ignored directories, so
// a file inside one cannot be re-included, as in git.
func (g *gitignore) match(p string, isDir bool) bool {
	ignored := false
	for _, r := range g.rules {
		if r.negate == ignored && r.matches(p, isDir) {
			ignored = !r.negate
		}
	}
	return ignored
}

// ignored reports whether p or any directory above it is ignored.
func (g *gitignore) ignored(p string, isDir bool) bool {
	for i := range len(p) {
		if p[i] == '/' && g.match(p[:i], true) {
			return true
		}
	}
	return g.match(p, isDir)
}

// gitignore reads the root .gitignore; a missing or unreadable one ignores
// nothing, since the listing is still correct without it.
func (t *Tree) gitignore() *gitignore {
	// Look first: opening a FIFO named .gitignore would block.
	_, _, f, err := t.openFile(".gitignore", ".gitignore")
	if err != nil || f == nil { // missing, a directory, or a special file
		return &gitignore{}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxGitignoreBytes))
	if err != nil {
		return &gitignore{}
	}
	return parseGitignore(string(data))
}
