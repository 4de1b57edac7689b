package files

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
	"unicode/utf8"
)

// MaxFileSize is the largest file Read accepts. The whole file is read to
// count lines and hash it, so this bounds the memory one request can take.
const MaxFileSize = 64 << 20

// binarySniffLen is how much of a file is searched for a NUL byte, the same
// heuristic git uses to call a file binary.
const binarySniffLen = 8000

// Budget bounds a read. MaxTokens must lie in 1000–20000 and CharsPerToken in
// 3–5; a zero field takes its value from DefaultBudget and other values are
// clamped into range (the budget comes from server configuration, and a read
// should not fail because of it).
//
// The budget is counted in bytes of UTF-8, not in runes: a page holds at most
// MaxTokens*CharsPerToken bytes. Bytes are what a client's context and the
// wire actually carry, they never under-count multibyte text, and they keep
// the cut a slice operation.
type Budget struct{ MaxTokens, CharsPerToken int }

// DefaultBudget is the contract's default: 5000 tokens of 4 bytes, 20000 bytes.
var DefaultBudget = Budget{MaxTokens: 5000, CharsPerToken: 4}

// Normalize returns b with zero fields replaced by DefaultBudget's and the
// others clamped into their allowed ranges. Read applies it; callers use it
// to report the effective values.
func (b Budget) Normalize() Budget {
	if b.MaxTokens == 0 {
		b.MaxTokens = DefaultBudget.MaxTokens
	}
	if b.CharsPerToken == 0 {
		b.CharsPerToken = DefaultBudget.CharsPerToken
	}
	b.MaxTokens = min(max(b.MaxTokens, 1000), 20000)
	b.CharsPerToken = min(max(b.CharsPerToken, 3), 5)
	return b
}

// MaxChars is the page size in bytes: MaxTokens*CharsPerToken after Normalize.
func (b Budget) MaxChars() int {
	n := b.Normalize()
	return n.MaxTokens * n.CharsPerToken
}

// ReadOptions selects the lines a Read returns.
type ReadOptions struct {
	Offset int    // 1-based first line; 0 means 1
	Limit  int    // max lines; 0 means no line limit (the budget still applies)
	Budget Budget // size bound of the page; see Budget
}

// Page is one token-bounded slice of a text file and its metadata.
type Page struct {
	Path       string    // the clean path as requested
	Content    string    // the returned lines, each with its "\n"
	Size       int64     // file size in bytes
	ModifiedAt time.Time // modification time, UTC
	Language   *string   // see Language; nil when unknown

	TotalLines    int  // lines in the file; a last line without "\n" counts, an empty file has 0
	Offset        int  // effective 1-based first line
	Limit         *int // the Limit asked for, nil when none
	ReturnedLines int  // lines in Content, a cut line counting as one

	HasMore    bool // NextOffset != nil
	NextOffset *int // 1-based line to pass as Offset to continue; nil at the end

	EstimatedTokens     int // ceil(len(Content) / CharsPerToken)
	MaxTokensPerRequest int // the effective Budget.MaxTokens

	Truncated       bool // the budget, not the Limit or the end of file, ended the page
	TruncatedAtLine *int // last line returned (wholly or cut) when Truncated
	LineCut         bool // a single line longer than the whole budget was cut; its remainder is skipped

	RequiresPagination bool    // same as HasMore, under the contract's name
	PaginationHint     *string // how to continue, in words; nil at the end

	ContentHash string // lowercase hex SHA-256 of the whole file's raw bytes, whatever the page
}

// bufPool recycles whole-file read buffers: a page copies what it returns,
// so the buffer is garbage as soon as Read returns. Big buffers are not
// pooled so one huge file does not pin memory.
var bufPool = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledBuf = 1 << 20

// Read returns one page of the text file p, a path relative to the tree root.
//
// Content holds whole lines only, starting at Offset, at most Limit of them
// and at most the budget's bytes. When the first line alone exceeds the
// budget, its first MaxChars bytes are returned (never splitting a UTF-8
// sequence), LineCut is set and NextOffset skips the rest of that line.
// Following NextOffset from line 1 returns every line exactly once. An
// Offset past the end yields an empty page, not an error.
//
// Errors are *Error for bad options or paths, missing files, directories,
// special files, binary (NUL byte in the first 8000 bytes, or not UTF-8) and
// files over MaxFileSize.
func (t *Tree) Read(p string, o ReadOptions) (*Page, error) {
	if o.Offset < 0 {
		return nil, newError(CodeInvalidArgument, "offset is 1-based: pass 1 to start at the first line", nil,
			"offset must be an integer >= 1")
	}
	if o.Limit < 0 {
		return nil, newError(CodeInvalidArgument, "omit limit to read as much as the token budget allows", nil,
			"limit must be an integer >= 1")
	}
	clean, err := CleanPath(p, false)
	if err != nil {
		return nil, err
	}
	resolved, fi, f, err := t.openFile(clean, p)
	if err != nil {
		return nil, err
	}
	if f != nil {
		defer f.Close()
	}
	switch {
	case fi.IsDir():
		return nil, newError(CodeNotAFile, "it is a directory: list it with browse_directory or directory_tree", nil,
			"Not a file: %s", quote(clean))
	case f == nil: // neither a directory nor a regular file
		return nil, newError(CodeNotAFile, "only regular files can be read", nil,
			"Not a file: %s is a special file (%v)", quote(clean), fi.Mode().Type())
	case fi.Size() > MaxFileSize:
		return nil, tooLarge(clean, fi.Size())
	}

	bp := bufPool.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= maxPooledBuf {
			bufPool.Put(bp)
		}
	}()
	data, err := readAll(f, clean, fi.Size(), *bp)
	*bp = data[:0]
	if err != nil {
		return nil, err
	}

	sniff := data[:min(len(data), binarySniffLen)]
	if bytes.IndexByte(sniff, 0) >= 0 || !utf8.Valid(data) {
		return nil, newError(CodeBinary, "", nil,
			"file %s is binary (not UTF-8 text) and cannot be shown as text", quote(clean))
	}
	sum := sha256.Sum256(data)

	pg := &Page{
		Path:        clean,
		Size:        int64(len(data)),
		ModifiedAt:  fi.ModTime().UTC(),
		Language:    Language(resolved),
		ContentHash: hex.EncodeToString(sum[:]),
	}
	paginate(pg, data, o)
	return pg, nil
}

// readAll reads f, of the given size, into buf (reused when large enough),
// refusing to go past MaxFileSize if the file grows meanwhile.
func readAll(f *os.File, clean string, size int64, buf []byte) ([]byte, error) {
	// One byte more than the size lets the first Read reach EOF when the size is right.
	need := int(size) + 1
	if cap(buf) < need {
		buf = make([]byte, 0, need)
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			if len(buf) > MaxFileSize {
				return buf[:0], tooLarge(clean, int64(len(buf)))
			}
			buf = append(buf, 0)[:len(buf)] // the file grew: let append pick a bigger array
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			if len(buf) > MaxFileSize {
				return buf[:0], tooLarge(clean, int64(len(buf)))
			}
			return buf, nil
		}
		if err != nil {
			return buf[:0], fmt.Errorf("files: read %s: %w", quote(clean), err)
		}
	}
}

func tooLarge(clean string, size int64) *Error {
	return newError(CodeTooLarge, "files this large cannot be paged through; browse_directory shows sizes, so pick a smaller file", nil,
		"file %s is %d bytes; files over %d MiB cannot be read", quote(clean), size, MaxFileSize>>20)
}

// paginate fills the page fields of pg from the whole file data and the options.
func paginate(pg *Page, data []byte, o ReadOptions) {
	b := o.Budget.Normalize()
	maxChars := b.MaxTokens * b.CharsPerToken
	offset := max(o.Offset, 1)

	pg.Offset = offset
	pg.MaxTokensPerRequest = b.MaxTokens
	if o.Limit > 0 {
		pg.Limit = &o.Limit
	}
	pg.TotalLines = bytes.Count(data, nl)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		pg.TotalLines++
	}
	if offset > pg.TotalLines {
		return // past the end: an empty page with nothing more to read
	}

	// start: first byte of line offset.
	start := 0
	for range offset - 1 {
		start += bytes.IndexByte(data[start:], '\n') + 1
	}
	budgetEnd := start + maxChars // the page may not extend past this byte

	// end of the window the Limit (or the end of file) allows.
	end := len(data)
	if o.Limit > 0 {
		end = endOfLines(data, start, o.Limit, budgetEnd)
	}
	var hint string
	switch {
	case end <= budgetEnd:
		// The budget does not bind: Limit or EOF ended the page.
		pg.setContent(data, start, end, b)
		if next := offset + pg.ReturnedLines; next <= pg.TotalLines {
			pg.NextOffset = &next
			hint = fmt.Sprintf("More content available. Use offset=%d to continue reading.", next)
		}
	default:
		if i := bytes.LastIndexByte(data[start:budgetEnd], '\n'); i >= 0 {
			// Whole lines up to the last newline inside the budget.
			pg.setContent(data, start, start+i+1, b)
			last := offset + pg.ReturnedLines - 1
			next := last + 1 // a newline ended the page, so another line follows
			pg.Truncated, pg.TruncatedAtLine, pg.NextOffset = true, &last, &next
			hint = fmt.Sprintf("Content truncated at line %d due to token limit. Use offset=%d to continue reading.", last, next)
			break
		}
		// The first line alone exceeds the budget: cut it on a rune boundary.
		lineLen := bytes.IndexByte(data[start:], '\n')
		if lineLen < 0 {
			lineLen = len(data) - start
		}
		cut := budgetEnd
		for cut > start && !utf8.RuneStart(data[cut]) {
			cut--
		}
		pg.setContent(data, start, cut, b)
		pg.ReturnedLines = 1
		line := offset
		pg.Truncated, pg.TruncatedAtLine, pg.LineCut = true, &line, true
		hint = fmt.Sprintf("Line %d is longer than the token budget; its first %d of %d bytes were returned.",
			line, cut-start, lineLen)
		if next := line + 1; next <= pg.TotalLines {
			pg.NextOffset = &next
			hint += fmt.Sprintf(" Use offset=%d to continue.", next)
		} else {
			hint += " It is the last line of the file."
		}
	}
	pg.HasMore = pg.NextOffset != nil
	pg.RequiresPagination = pg.HasMore
	if hint != "" {
		pg.PaginationHint = &hint
	}
}

var nl = []byte{'\n'}

// setContent sets Content, ReturnedLines and EstimatedTokens to data[start:end].
func (pg *Page) setContent(data []byte, start, end int, b Budget) {
	c := data[start:end]
	pg.Content = string(c)
	pg.ReturnedLines = bytes.Count(c, nl)
	if len(c) > 0 && c[len(c)-1] != '\n' {
		pg.ReturnedLines++
	}
	pg.EstimatedTokens = (len(c) + b.CharsPerToken - 1) / b.CharsPerToken
}

// endOfLines returns the byte offset just past n lines starting at start (or
// len(data) if fewer remain). It stops scanning once past stopAt, where the
// budget binds anyway, so a huge Limit costs no more than the budget.
func endOfLines(data []byte, start, n, stopAt int) int {
	pos := start
	for range n {
		i := bytes.IndexByte(data[pos:], '\n')
		if i < 0 {
			return len(data)
		}
		pos += i + 1
		if pos > stopAt {
			break
		}
	}
	return pos
}
