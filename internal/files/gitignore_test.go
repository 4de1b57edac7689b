package files

import "testing"

func TestGitignore(t *testing.T) {
	cases := []struct {
		rules string
		path  string
		isDir bool
		want  bool
	}{
		// Comments, blank lines, trailing spaces, escapes.
		{"# comment\n\n*.log\n", "a.log", false, true},
		{"# comment\n", "# comment", false, false},
		{`\#hash`, "#hash", false, true},
		{`\!bang`, "!bang", false, true},
		{"foo   ", "foo", false, true},
		{`bar\ `, "bar ", false, true},
		{`bar\ `, "bar", false, false},
		{"*.log\r\n", "a.log", false, true}, // CRLF files
		{"   \n\t\n", "x", false, false},

		// No slash: matches the name at any depth, files and directories.
		{"*.log", "dir/sub/b.log", false, true},
		{"*.log", "a.logx", false, false},
		{"build", "src/build", true, true},
		{"build", "src/build", false, true},
		{"?.txt", "a.txt", false, true},
		{"?.txt", "ab.txt", false, false},
		{"?.txt", "é.txt", false, true},

		// Trailing slash: directories only.
		{"build/", "build", true, true},
		{"build/", "build", false, false},
		{"build/", "src/build", true, true},
		{"build/", "build/out.go", false, true}, // through its ignored parent

		// Leading or inner slash: anchored at the root.
		{"/build", "build", true, true},
		{"/build", "src/build", true, false},
		{"/secret.txt", "secret.txt", false, true},
		{"/secret.txt", "a/secret.txt", false, false},
		{"doc/*.txt", "doc/a.txt", false, true},
		{"doc/*.txt", "doc/sub/a.txt", false, false},
		{"doc/*.txt", "x/doc/a.txt", false, false},
		{"src/*.go", "src/a/b.go", false, false}, // * does not cross /

		// Double star.
		{"**/foo", "foo", false, true},
		{"**/foo", "a/b/foo", false, true},
		{"**/foo/bar", "x/foo/bar", false, true},
		{"a/**/b", "a/b", false, true},
		{"a/**/b", "a/x/b", false, true},
		{"a/**/b", "a/x/y/b", false, true},
		{"a/**/b", "a/xb", false, false},
		{"abc/**", "abc/x", false, true},
		{"abc/**", "abc/x/y", false, true},
		{"abc/**", "abc", true, false}, // only what is inside
		{"a/**/*.go", "a/b/c/d.go", false, true},
		{"**", "anything/at/all", false, true},

		// Classes.
		{"[abc].txt", "b.txt", false, true},
		{"[abc].txt", "d.txt", false, false},
		{"[!abc].txt", "d.txt", false, true},
		{"[^abc].txt", "a.txt", false, false},
		{"[a-c]x", "bx", false, true},
		{"[a-c]x", "dx", false, false},
		{"[]]x", "]x", false, true},
		{"[é-ë].md", "ê.md", false, true},
		{"[ab", "[ab", false, true}, // no closing bracket: literal

		// Negation: the last matching rule wins...
		{"*.log\n!keep.log", "keep.log", false, false},
		{"*.log\n!keep.log", "x.log", false, true},
		{"!keep.log\n*.log", "keep.log", false, true},
		// ...but a file cannot be re-included when its directory is ignored.
		{"logs/\n!logs/keep.log", "logs/keep.log", false, true},
		{"logs/*\n!logs/keep.log", "logs/keep.log", false, false},
		{"*\n!*/\n!*.go", "src/a.go", false, false},
		{"*\n!*/\n!*.go", "src/a.txt", false, true},
	}
	for _, c := range cases {
		if got := parseGitignore(c.rules).ignored(c.path, c.isDir); got != c.want {
			t.Errorf("rules %q: ignored(%q, dir=%v) = %v, want %v", c.rules, c.path, c.isDir, got, c.want)
		}
	}
}

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		pattern, path string
		want          bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "a/b/main.go", true}, // no slash: the name at any depth
		{"/*.go", "main.go", true},
		{"/*.go", "a/main.go", false},
		{"src/*.go", "src/main.go", true},
		{"src/*.go", "src/sub/main.go", false},
		{"src/**/*.go", "src/main.go", true},
		{"src/**/*.go", "src/a/b/main.go", true},
		{"src/**", "src/a/b/main.go", true},
		{"src/**", "srcx/main.go", false},
		{"*_test.go", "pkg/x_test.go", true},
		{"*a*b*c*", "xaxxbxxxcx", true},
		{"*a*b*c*", "xaxxcxxxbx", false},
		{"a*", "", false},
		{"日*.txt", "dir/日本.txt", true},
		{"?", "日", true},
		{`\*`, "*", true},
		{`\*`, "a", false},
	}
	for _, c := range cases {
		if got := compileGlob(c.pattern).match(c.path); got != c.want {
			t.Errorf("glob %q match %q = %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
}

// TestGlobNoBlowup guards the linear backtracking: a naive recursive matcher
// takes exponential time on these.
func TestGlobNoBlowup(t *testing.T) {
	name := "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"
	if matchElem("*a*a*a*a*a*a*a*a*a*a*a*a*c", name) {
		t.Fatal("unexpected match")
	}
	p := "a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/b"
	if compileGlob("**/a/**/a/**/a/**/a/**/a/**/c").match(p) {
		t.Fatal("unexpected match")
	}
}
