package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// packageRoot returns the directory that names the package a file belongs
// to: a module@version directory in the Go module cache, a package under
// node_modules, or the first path component under any other root (a
// Python package or module).
func packageRoot(root, file string) string {
	rel, err := filepath.Rel(root, file)
	if err != nil {
		return filepath.Dir(file)
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if i := lastIndex(parts, "node_modules"); i >= 0 && i+1 < len(parts)-1 {
		n := i + 2
		if strings.HasPrefix(parts[i+1], "@") && i+2 < len(parts)-1 {
			n = i + 3
		}
		return filepath.Join(root, filepath.Join(parts[:n]...))
	}
	for i, p := range parts[:len(parts)-1] {
		if strings.Contains(p, "@") {
			return filepath.Join(root, filepath.Join(parts[:i+1]...))
		}
	}
	return filepath.Join(root, parts[0])
}

func lastIndex(parts []string, s string) int {
	for i := len(parts) - 1; i >= 0; i-- {
		if parts[i] == s {
			return i
		}
	}
	return -1
}

// manifestEntry summarises the files of one package root.
type manifestEntry struct {
	files, bytes int64
}

// writeManifest records the package roots trained on, with file counts and
// sizes, and a fingerprint of every file's path and content.
func writeManifest(path string, roots map[string]*manifestEntry, fingerprint string, header []string) error {
	var b strings.Builder
	for _, h := range header {
		fmt.Fprintf(&b, "# %s\n", h)
	}
	fmt.Fprintf(&b, "# fingerprint %s\n", fingerprint)
	keys := make([]string, 0, len(roots))
	for k := range roots {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s\t%d\t%d\n", k, roots[k].files, roots[k].bytes)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// readManifest returns the package roots listed in a manifest and its
// fingerprint.
func readManifest(path string) (map[string]bool, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	roots := map[string]bool{}
	fp := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "# fingerprint "); ok {
			fp = strings.TrimSpace(rest)
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		roots[strings.Split(line, "\t")[0]] = true
	}
	return roots, fp, sc.Err()
}

// fingerprint hashes the files' paths and content hashes, in order.
func fingerprint(files []string, sums [][32]byte) string {
	h := sha256.New()
	for i, f := range files {
		h.Write([]byte(f))
		h.Write([]byte{0})
		h.Write(sums[i][:])
	}
	return hex.EncodeToString(h.Sum(nil))
}
