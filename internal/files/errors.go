package files

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Error codes carried by *Error. They are stable: adapters may switch on them.
const (
	CodeNotFound        = "not_found"        // the path does not exist
	CodeInvalidPath     = "invalid_path"     // the path is malformed, leaves the tree or names .git
	CodeBinary          = "binary"           // the file is not UTF-8 text
	CodeNotAFile        = "not_a_file"       // a file was required: the path is a directory or special file
	CodeNotADirectory   = "not_a_directory"  // a directory was required: the path is a file
	CodeTooLarge        = "too_large"        // the file exceeds MaxFileSize
	CodeInvalidArgument = "invalid_argument" // an option (offset, limit, sort order...) is out of range
)

// Error is a user-facing error: Message says what is wrong with the request
// and names the offending path or value, Hint (optional) says what to do
// instead. Code is one of the Code* constants.
type Error struct {
	Code    string
	Message string
	Hint    string

	err error // underlying cause, kept for errors.Is/As and logs; never shown to users
}

// Error returns the message followed by the hint, e.g.
// `path "../x" leaves the repository: use a path relative to the repository root, e.g. "src/main.go"`.
func (e *Error) Error() string {
	if e.Hint == "" {
		return e.Message
	}
	return e.Message + ": " + e.Hint
}

// Unwrap returns the underlying cause, if any, so that errors.Is(err,
// fs.ErrNotExist) keeps working through an *Error.
func (e *Error) Unwrap() error { return e.err }

func newError(code, hint string, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Hint: hint, err: cause}
}

// relativeHint is the advice for every malformed path.
const relativeHint = `use a path relative to the repository root, e.g. "src/main.go"`

// quote renders a user-supplied string for a message. Long strings are cut so
// that a 5000-byte path does not turn into a 5000-byte error message.
func quote(s string) string {
	const max = 80
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(s[:cut]), len(s))
}
