package chunk

/*
#include <stddef.h>

// Defined by the tree-sitter runtime that go-tree-sitter compiles in.
extern void ts_set_allocator(void *(*)(size_t), void *(*)(size_t, size_t), void *(*)(void *, size_t), void (*)(void *));

static void chunk_use_default_allocator(void) { ts_set_allocator(NULL, NULL, NULL, NULL); }
*/
import "C"

// useDefaultAllocator makes the tree-sitter runtime allocate with libc
// directly. go-tree-sitter installs an allocator that calls back into Go
// (which then calls C.malloc) on every allocation, so each parse pays
// thousands of C->Go->C transitions: about a quarter of the CPU time of
// chunking GOROOT. Both allocators use the same libc heap, so memory
// allocated before the switch is still freed correctly. It must run after
// go-tree-sitter's init, which package initialisation order guarantees
// (this package imports it).
func useDefaultAllocator() { C.chunk_use_default_allocator() }

func init() { useDefaultAllocator() }
