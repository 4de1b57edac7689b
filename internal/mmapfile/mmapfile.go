// Package mmapfile maps index files read-only: the bm25, vector and raw
// trigram files are searched in place, so their pages belong to the page
// cache, not the Go heap.
package mmapfile

import (
	"fmt"
	"os"
	"syscall"
)

// Map maps the whole file at path read-only. An empty file gives an
// empty slice (mmap refuses a zero length). Release it with Unmap.
func Map(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() == 0 {
		return []byte{}, nil
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", path, err)
	}
	return data, nil
}

// Unmap releases what Map returned.
func Unmap(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	return syscall.Munmap(data)
}
