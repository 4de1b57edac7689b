// Package trigram is the trigram index behind regex_search (and the
// substring side of search_code): one index per repository snapshot,
// answering regex and literal searches with exactly the lines ripgrep would
// report on the same files, without scanning the repository.
//
// # Layout
//
// An index is a directory: a manifest plus one zoekt shard file per hash
// shard (ShardOf), built with zoekt's ShardBuilder and opened with zoekt's
// mmap searcher, so the corpus stays out of the Go heap. Documents that
// contain a NUL byte cannot be stored by zoekt (it replaces their content
// with a marker) and go to a small .raw file beside their shard. Build and
// Update write into a temporary sibling directory and rename it into place.
// Update hard-links every hash shard and writes the documents changed since
// they were built into one small delta shard; the hash shards hide their
// stale copies (listed in the manifest). Re-indexing after a commit thus
// costs the size of the changes, until the delta outgrows its bound and is
// folded back into the hash shards it touches.
//
// # Searching
//
// zoekt is used only to pick candidate files. The pattern is parsed with
// Go's regexp/syntax and reduced to a boolean query over substrings every
// match must contain (analyze.go); zoekt's trigram index evaluates it. The
// matching itself happens here, line by line, on the stored contents:
//   - literal substrings from the same query find candidate lines with
//     bytes.Index, and Go's regexp runs on those lines only;
//   - when the pattern has no usable literal, a lazily built DFA (dfa.go)
//     finds the matching lines and the regexp only computes columns;
//   - lines where Go's regexp and ripgrep's (Rust) engine disagree - \b or
//     \B next to non-ASCII text, invalid UTF-8 - are matched by a small
//     Pike VM with Rust's rules (vm.go); \d \w \s are rewritten to their
//     Unicode meaning before parsing (pattern.go).
//
// # Conventions
//
// One Match per matching line (like rg's line-oriented output and one rg
// --json "match" message), Column is the first match on the line, and
// TotalMatches counts matching lines. Results are sorted by path (bytewise)
// and line. The reference is `rg --no-config -uuu -a -n --column` run over a
// directory holding exactly the indexed files: which files are indexed
// (gitignore, binaries, size limits) is the caller's decision. Globs follow
// ripgrep's -g rules (glob.go).
package trigram
