package files

import (
	"path"
	"strings"
)

// extLanguages is the contract's fixed extension map (list_files), plus a few
// unambiguous spellings of the same languages (.mjs, .hh, .markdown...).
var extLanguages = map[string]string{
	".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
	".ts": "typescript", ".java": "java", ".c": "c", ".h": "c",
	".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
	".cs": "csharp", ".go": "go", ".rs": "rust", ".php": "php", ".rb": "ruby",
	".swift": "swift", ".kt": "kotlin", ".kts": "kotlin", ".scala": "scala", ".sql": "sql",
	".html": "html", ".htm": "html", ".css": "css", ".scss": "scss", ".sass": "sass", ".less": "less",
	".vue": "vue", ".jsx": "jsx", ".tsx": "tsx", ".md": "markdown", ".markdown": "markdown",
	".rst": "rst", ".txt": "text", ".json": "json", ".xml": "xml", ".yml": "yaml", ".yaml": "yaml",
	".toml": "toml", ".ini": "ini", ".cfg": "config", ".conf": "config",
	".sh": "shell", ".bash": "shell", ".zsh": "shell", ".fish": "shell",
	".ps1": "powershell", ".bat": "batch", ".cmd": "batch",
	".dockerfile": "dockerfile",
}

// nameLanguages recognises files known by their whole (lower-cased) name.
var nameLanguages = map[string]string{
	"makefile": "makefile", "gnumakefile": "makefile", "dockerfile": "dockerfile",
}

// Language returns the language of the file at path p from its name or
// extension (case-insensitive), or nil when unknown. Each call returns a
// fresh pointer, so callers may keep or change it.
func Language(p string) *string {
	base := strings.ToLower(path.Base(p))
	l, ok := nameLanguages[base]
	if !ok && strings.HasPrefix(base, "dockerfile.") { // Dockerfile.dev, Dockerfile.prod
		l, ok = "dockerfile", true
	}
	if !ok {
		l, ok = extLanguages[path.Ext(base)]
	}
	if !ok {
		return nil
	}
	return &l
}
