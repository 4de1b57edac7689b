// Package files gives safe, token-bounded access to one repository snapshot
// directory: reading a file one page at a time, listing files, and drawing a
// directory tree.
//
// It knows nothing about MCP, users or HTTP; callers resolve a repository to a
// directory, Open it as a Tree and pass user-supplied relative paths straight
// in. Every access goes through an [os.Root], so no path, ".." or symbolic link
// can reach outside the directory. On top of that the package refuses the git
// metadata directory (.git) in any letter case, also when a symbolic link
// inside the tree points into it, because .git/config may hold credentials.
//
// # Patterns
//
// .gitignore rules, ListOptions.Pattern and TreeOptions.Include/Exclude share
// one glob syntax, git's: a pattern without "/" (a trailing one aside)
// matches the last element of a path at any depth ("*.go" matches
// "a/b/c.go"); a pattern with "/" matches the path from the repository root,
// and a leading "/" only anchors ("/*.go" matches "c.go", not "a/c.go").
// "*" and "?" never cross "/", "[...]" is a class ("!" or "^" negates), "\"
// escapes, and "**" as a whole element matches any number of directories
// ("src/**/*.go"); a trailing "/**" matches only what is inside.
//
// Errors a user can act on are returned as *[Error] with a stable Code, a
// message naming the path, and a hint; any other error is a server fault.
package files
