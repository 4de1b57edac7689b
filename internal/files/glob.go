package files

import (
	"path"
	"strings"
	"unicode/utf8"
)

// glob is a compiled path pattern with gitignore-style semantics, shared by
// .gitignore rules, List's Pattern and DirTree's include/exclude patterns:
//
//   - a pattern without "/" (other than a trailing one) matches the last
//     element of a path at any depth: "*.go" matches "a/b/c.go";
//   - a pattern with a "/" is anchored at the repository root; a leading
//     "/" only anchors: "/*.go" matches "c.go" but not "a/c.go";
//   - "*" and "?" never cross "/"; "[...]" is a class ("!" or "^" negates,
//     ranges allowed); "\" escapes the next character;
//   - "**" as a whole element matches any number of directories, including
//     none, except that a trailing "/**" matches only things inside.
type glob struct {
	segs     []string // pattern elements; one element when basename is set
	basename bool     // match against the last path element only
}

// rule is a glob with gitignore's modifiers.
type rule struct {
	glob
	negate  bool // "!pattern": re-include
	dirOnly bool // "pattern/": match directories only
}

// newRule compiles src; a trailing "/" makes it match directories only.
func newRule(src string) rule {
	var r rule
	if strings.HasSuffix(src, "/") {
		r.dirOnly = true
		src = strings.TrimRight(src, "/")
	}
	r.glob = compileGlob(src)
	return r
}

// matches reports whether the rule matches the clean relative path p.
func (r rule) matches(p string, isDir bool) bool {
	return (isDir || !r.dirOnly) && r.glob.match(p)
}

func compileGlob(src string) glob {
	anchored := strings.HasPrefix(src, "/")
	if !anchored && !strings.Contains(src, "/") {
		return glob{segs: []string{src}, basename: true}
	}
	var segs []string
	for s := range strings.SplitSeq(src, "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	if n := len(segs); n > 1 && segs[n-1] == "**" {
		// "dir/**" matches what is inside dir, not dir itself: demand one
		// more element ("*") before the any-depth "**".
		segs = append(segs[:n-1], "*", "**")
	}
	return glob{segs: segs}
}

// match reports whether the clean relative path p (never "") matches.
func (g glob) match(p string) bool {
	if g.basename {
		return matchElem(g.segs[0], path.Base(p))
	}
	return matchElems(g.segs, strings.Split(p, "/"))
}

// matchElems matches path elements against pattern elements where "**"
// stands for any run of elements. It is the classic wildcard algorithm one
// level up: on a mismatch, retry from the last "**" with one more element
// swallowed, which is linear in practice and never exponential.
func matchElems(pat, elems []string) bool {
	pi, ei := 0, 0
	starPi, starEi := -1, 0
	for pi < len(pat) || ei < len(elems) {
		if pi < len(pat) {
			if pat[pi] == "**" {
				starPi, starEi = pi, ei
				pi++
				continue
			}
			if ei < len(elems) && matchElem(pat[pi], elems[ei]) {
				pi++
				ei++
				continue
			}
		}
		if starPi >= 0 && starEi < len(elems) {
			starEi++
			pi, ei = starPi+1, starEi
			continue
		}
		return false
	}
	return true
}

// matchElem matches one path element (no "/") against one pattern element,
// with the same last-star backtracking as matchElems.
func matchElem(pat, name string) bool {
	px, nx := 0, 0
	starPx, starNx := -1, 0
	for px < len(pat) || nx < len(name) {
		if px < len(pat) {
			switch c := pat[px]; c {
			case '*':
				starPx, starNx = px, nx
				px++
				continue
			case '?':
				if nx < len(name) {
					_, w := utf8.DecodeRuneInString(name[nx:])
					px++
					nx += w
					continue
				}
			case '[':
				if nx < len(name) {
					r, w := utf8.DecodeRuneInString(name[nx:])
					matched, next, ok := matchClass(pat, px, r)
					if !ok && name[nx] == '[' { // no closing "]": a literal "["
						px++
						nx++
						continue
					}
					if ok && matched {
						px = next
						nx += w
						continue
					}
				}
			case '\\':
				lit, adv := byte('\\'), 1
				if px+1 < len(pat) {
					lit, adv = pat[px+1], 2
				}
				if nx < len(name) && name[nx] == lit {
					px += adv
					nx++
					continue
				}
			default:
				if nx < len(name) && name[nx] == c {
					px++
					nx++
					continue
				}
			}
		}
		if starPx >= 0 && starNx < len(name) {
			_, w := utf8.DecodeRuneInString(name[starNx:])
			starNx += w
			px, nx = starPx+1, starNx
			continue
		}
		return false
	}
	return true
}

// matchClass matches r against the class starting at pat[px] == '['. ok is
// false when the class has no closing "]"; next is the index after it.
func matchClass(pat string, px int, r rune) (matched bool, next int, ok bool) {
	i := px + 1
	negate := i < len(pat) && (pat[i] == '!' || pat[i] == '^')
	if negate {
		i++
	}
	for first := true; i < len(pat); first = false {
		if pat[i] == ']' && !first {
			return matched != negate, i + 1, true
		}
		lo, w := classChar(pat, i)
		i += w
		hi := lo
		if i+1 < len(pat) && pat[i] == '-' && pat[i+1] != ']' {
			hi, w = classChar(pat, i+1)
			i += 1 + w
		}
		if lo <= r && r <= hi {
			matched = true
		}
	}
	return false, 0, false
}

func classChar(pat string, i int) (rune, int) {
	if pat[i] == '\\' && i+1 < len(pat) {
		r, w := utf8.DecodeRuneInString(pat[i+1:])
		return r, w + 1
	}
	return utf8.DecodeRuneInString(pat[i:])
}
