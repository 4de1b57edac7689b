package trigram

import (
	"fmt"
	"regexp"
	"strings"
)

// glob is one ripgrep -g pattern, with gitignore semantics as implemented
// by ripgrep's override globs (ripgrep 13, verified against rg itself):
//   - a pattern without '/' (ignoring a trailing one) matches the base name
//     of a file or directory at any depth;
//   - a pattern with a leading or inner '/' is anchored at the repository
//     root and matches the whole relative path; '*' and '?' never match '/';
//     "**/" , "/**/" and a trailing "/**" span directories;
//   - a trailing '/' restricts the pattern to directories;
//   - {a,b} alternatives, [...] and [!...] classes, and \ escapes work;
//   - matching is case-sensitive.
type glob struct {
	re       *regexp.Regexp
	anchored bool
	dirOnly  bool
}

func compileGlob(pat string) (*glob, error) {
	g := &glob{}
	p := pat
	if strings.HasSuffix(p, "/") && len(p) > 1 {
		g.dirOnly = true
		p = strings.TrimSuffix(p, "/")
	}
	if strings.HasPrefix(p, "/") {
		g.anchored = true
		p = p[1:]
	} else if strings.Contains(p, "/") {
		g.anchored = true
	}
	if p == "" {
		return nil, fmt.Errorf("empty glob %q", pat)
	}
	expr, err := globToRegexp(p)
	if err != nil {
		return nil, fmt.Errorf("invalid glob %q: %v", pat, err)
	}
	re, err := regexp.Compile("^(?:" + expr + ")$")
	if err != nil {
		return nil, fmt.Errorf("invalid glob %q: %v", pat, err)
	}
	g.re = re
	return g, nil
}

func globToRegexp(p string) (string, error) {
	var b strings.Builder
	inBrace := false
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case strings.HasPrefix(p[i:], "**/") && (i == 0 || p[i-1] == '/'):
			// "**/" at the start of a component: zero or more directories.
			b.WriteString(`(?:.*/)?`)
			i += 3
		case strings.HasPrefix(p[i:], "**") && i+2 == len(p) && i > 0 && p[i-1] == '/':
			// trailing "/**": everything below the directory.
			b.WriteString(`.*`)
			i += 2
		case c == '*':
			for i < len(p) && p[i] == '*' {
				i++
			}
			b.WriteString(`[^/]*`)
		case c == '?':
			b.WriteString(`[^/]`)
			i++
		case c == '\\':
			if i+1 >= len(p) {
				return "", fmt.Errorf("dangling escape")
			}
			b.WriteString(regexp.QuoteMeta(p[i+1 : i+2]))
			i += 2
		case c == '[':
			end := i + 1
			if end < len(p) && (p[end] == '!' || p[end] == '^') {
				end++
			}
			if end < len(p) && p[end] == ']' {
				end++
			}
			for end < len(p) && p[end] != ']' {
				end++
			}
			if end >= len(p) {
				return "", fmt.Errorf("unclosed character class")
			}
			body := p[i+1 : end]
			neg := false
			if strings.HasPrefix(body, "!") || strings.HasPrefix(body, "^") {
				neg, body = true, body[1:]
			}
			b.WriteByte('[')
			if neg {
				b.WriteString("^/") // a class never matches the separator
			}
			for _, r := range body {
				if r == '\\' || r == '[' || r == ']' || r == '^' {
					b.WriteByte('\\')
				}
				b.WriteRune(r)
			}
			b.WriteByte(']')
			i = end + 1
		case c == '{':
			if inBrace {
				return "", fmt.Errorf("nested braces")
			}
			inBrace = true
			b.WriteString("(?:")
			i++
		case c == '}' && inBrace:
			inBrace = false
			b.WriteString(")")
			i++
		case c == ',' && inBrace:
			b.WriteString("|")
			i++
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
			i++
		}
	}
	if inBrace {
		return "", fmt.Errorf("unclosed brace")
	}
	return b.String(), nil
}

// match reports whether the glob matches the file or directory at path.
func (g *glob) match(path string, isDir bool) bool {
	if g.dirOnly && !isDir {
		return false
	}
	if g.anchored {
		return g.re.MatchString(path)
	}
	return g.re.MatchString(path[strings.LastIndexByte(path, '/')+1:])
}

// pathFilter decides which indexed paths a query covers.
type pathFilter struct {
	prefix string // "" = whole repository
	// rules are the globs in ripgrep's order: Query.Include as -g, then
	// Query.Exclude as -g !. A rule is a whitelist unless it was written
	// with a leading '!' (in Include) or comes from Exclude.
	rules      []globRule
	whitelists bool // at least one whitelist rule
}

type globRule struct {
	g         *glob
	whitelist bool
}

func newPathFilter(prefix string, include, exclude []string) (*pathFilter, error) {
	f := &pathFilter{}
	p := strings.Trim(prefix, "/")
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	if p == "." {
		p = ""
	}
	if p != "" {
		for _, part := range strings.Split(p, "/") {
			if part == ".." || part == "." || part == "" {
				return nil, fmt.Errorf("invalid path %q: must be a clean path relative to the repository root", prefix)
			}
		}
	}
	f.prefix = p
	add := func(s string, whitelist bool) error {
		if rest, ok := strings.CutPrefix(s, "!"); ok {
			s, whitelist = rest, !whitelist
		}
		g, err := compileGlob(s)
		if err != nil {
			return err
		}
		f.rules = append(f.rules, globRule{g: g, whitelist: whitelist})
		f.whitelists = f.whitelists || whitelist
		return nil
	}
	for _, s := range include {
		if err := add(s, true); err != nil {
			return nil, err
		}
	}
	for _, s := range exclude {
		if err := add(s, false); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// decide returns the last rule matching path: +1 whitelist, -1 ignore, 0
// no match.
func (f *pathFilter) decide(path string, isDir bool) int {
	for i := len(f.rules) - 1; i >= 0; i-- {
		if f.rules[i].g.match(path, isDir) {
			if f.rules[i].whitelist {
				return 1
			}
			return -1
		}
	}
	return 0
}

// allowed applies ripgrep's override rules: the last matching glob wins; a
// directory whose last matching glob is an exclude prunes everything below
// it; a file must itself match a whitelist glob when there is one (a
// whitelist glob matching a directory does not include its files).
func (f *pathFilter) allowed(path string) bool {
	if f.prefix != "" && path != f.prefix && !(strings.HasPrefix(path, f.prefix) && path[len(f.prefix)] == '/') {
		return false
	}
	if len(f.rules) == 0 {
		return true
	}
	for i := 0; i < len(path); i++ {
		if path[i] == '/' && f.decide(path[:i], true) < 0 {
			return false
		}
	}
	switch f.decide(path, false) {
	case 1:
		return true
	case -1:
		return false
	}
	return !f.whitelists
}

// all reports whether the filter lets every path through.
func (f *pathFilter) all() bool {
	return f.prefix == "" && len(f.rules) == 0
}
