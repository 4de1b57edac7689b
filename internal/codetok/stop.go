package codetok

// stopwords are dropped from the term stream. Two groups, both chosen
// because matching on them only adds noise to retrieval:
//
//   - English function words (articles, pronouns, auxiliaries, conjunctions,
//     prepositions): "the", "of", "is", "whether", "how", ...
//   - keywords that occur in nearly every function of the languages cidx
//     indexes and mean nothing to a search: func, def, function, return
//     ("returns" in a doc comment would otherwise match every return
//     statement), var, let, const, nil, null, none, undefined, self, elif,
//     void.
//
// Frequent words that do carry meaning in code are deliberately kept: error,
// err, string, type, new, get, set, all, any, each, true, false, async,
// await, import, class, struct, interface, public, private, static.
var stopwords = map[string]struct{}{}

var stopList = []string{
	// articles, conjunctions, prepositions
	"an", "the", "and", "or", "nor", "but", "of", "to", "in", "on", "at",
	"by", "for", "with", "from", "into", "onto", "upon", "as", "than",
	"then", "so", "such", "via", "if", "else", "while", "whether",
	"whereas", "thus", "hence", "also", "too", "very", "just",
	"etc", "eg", "ie",
	// be / have / do / modals
	"is", "are", "was", "were", "be", "been", "being", "am",
	"has", "have", "had", "having", "do", "does", "did", "doing",
	"can", "cannot", "could", "will", "would", "shall", "should", "may",
	"might", "must", "not",
	// pronouns and determiners
	"it", "its", "itself", "this", "that", "these", "those", "there",
	"here", "which", "who", "whom", "whose", "what", "when", "where",
	"how", "why", "we", "you", "your", "our", "us", "they", "them",
	"their", "he", "she", "his", "her", "me", "my",
	// ubiquitous keywords
	"func", "def", "function", "return", "var", "let", "const", "nil",
	"null", "none", "undefined", "self", "elif", "void",
}

// stopFilter[len][first letter] has bit (last letter) set for every
// stopword: most terms are rejected without a map lookup.
var stopFilter [16][26]uint32

func init() {
	for _, w := range stopList {
		stopwords[w] = struct{}{}
		stopFilter[len(w)][w[0]-'a'] |= 1 << (w[len(w)-1] - 'a')
	}
}

// IsStopword reports whether the lower-case term w is on the stopword list.
func IsStopword(w string) bool {
	_, ok := stopwords[w]
	return ok
}

// Stopwords returns a copy of the stopword list.
func Stopwords() []string { return append([]string(nil), stopList...) }

func isStop(b []byte) bool {
	n := len(b)
	if n < 2 || n >= len(stopFilter) {
		return false
	}
	f, l := b[0]-'a', b[n-1]-'a'
	if f >= 26 || l >= 26 || stopFilter[n][f]&(1<<l) == 0 {
		return false
	}
	_, ok := stopwords[string(b)]
	return ok
}

// Stem applies the conservative plural stemmer to a lower-case term:
//
//	-sses -> -ss          classes -> class, addresses -> address
//	-xes -ches -shes -zzes -> drop "es"
//	                      indexes -> index, matches -> match, hashes -> hash
//	-ies -> -y            entries -> entry (5+ letters: "ties" -> tie)
//	-ss -us -is           unchanged (class, status, analysis)
//	other -s              drop "s" (files -> file, returns -> return,
//	                      areas -> area, repos -> repo)
//
// Terms shorter than four letters are left alone (has, its, bus), except
// for a few acronym plurals (ids, ops, fds). A short exception table fixes
// the common words these rules get wrong (caches -> cache, aliases -> alias,
// statuses -> status, news, alias, bias, canvas, ...).
func Stem(w string) string {
	return string(stem([]byte(w)))
}

var stemExceptions = map[string]string{
	"ids": "id", "ops": "op", "fds": "fd",
	"caches": "cache", "cookies": "cookie", "movies": "movie",
	"zombies": "zombie", "goodies": "goodie", "rookies": "rookie",
	"statuses": "status", "buses": "bus", "viruses": "virus",
	"bonuses": "bonus", "corpuses": "corpus", "campuses": "campus",
	"focuses": "focus", "aliases": "alias", "biases": "bias",
	"canvases": "canvas", "atlases": "atlas",
	"news": "news", "alias": "alias", "canvas": "canvas", "bias": "bias",
	"atlas": "atlas", "gas": "gas", "pandas": "pandas",
}

// stem stems b in place and returns the (possibly shorter) slice.
func stem(b []byte) []byte {
	n := len(b)
	if n < 3 || b[n-1] != 's' {
		return b
	}
	if n <= 9 {
		if e, ok := stemExceptions[string(b)]; ok {
			return append(b[:0], e...)
		}
	}
	if n < 4 {
		return b
	}
	switch b[n-2] {
	case 's', 'u', 'i':
		// class, status, analysis
		return b
	case 'e':
		switch {
		case n >= 5 && b[n-3] == 's' && b[n-4] == 's':
			return b[:n-2] // classes
		case b[n-3] == 'x':
			return b[:n-2] // indexes
		case n >= 5 && b[n-3] == 'h' && (b[n-4] == 'c' || b[n-4] == 's'):
			return b[:n-2] // matches, hashes
		case n >= 5 && b[n-3] == 'z' && b[n-4] == 'z':
			return b[:n-2] // buzzes
		case n >= 5 && b[n-3] == 'i':
			b[n-3] = 'y'
			return b[:n-2] // entries
		}
	}
	return b[:n-1]
}
