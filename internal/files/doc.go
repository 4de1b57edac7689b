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
// Errors a user can act on are returned as *[Error] with a stable Code, a
// message naming the path, and a hint; any other error is a server fault.
package files
