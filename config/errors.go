package config

import (
	"errors"
	"fmt"
)

// Sentinel errors. Callers test for them with errors.Is; the errors this
// package returns wrap them together with the detail (option, value, file
// line) that a person needs to fix the problem.
var (
	// ErrUnknownOption reports an option name that Cairn does not have.
	ErrUnknownOption = errors.New("unknown option")

	// ErrImmutable reports an attempt to change, at runtime, an option that
	// can only be set at start-up. Its text is the reason Redis gives.
	ErrImmutable = errors.New("can't set immutable config")

	// ErrDuplicateOption reports an option named twice in one Set call. Its
	// text is the reason Redis gives.
	ErrDuplicateOption = errors.New("duplicate parameter")

	// ErrInvalidValue reports a value that an option does not accept. It is
	// always wrapped by a *ValueError that names the option, the value and
	// the reason.
	ErrInvalidValue = errors.New("invalid value")

	// ErrWrongArgs reports a directive with no value, or with several
	// tokens where the option takes exactly one.
	ErrWrongArgs = errors.New("wrong number of arguments")

	// ErrUnknownDirective reports a configuration-file line whose first
	// token names neither a Cairn option, nor a Kvrocks option, nor a
	// namespace.
	ErrUnknownDirective = errors.New("unknown directive")

	// ErrUnbalancedQuotes reports a line whose quotes are not closed, or
	// whose closing quote is followed by something other than a space.
	ErrUnbalancedQuotes = errors.New("unbalanced quotes")

	// ErrNamespace reports an invalid set of namespaces: an empty name or
	// token, a token shared by two namespaces or equal to requirepass, or
	// namespaces without a requirepass.
	ErrNamespace = errors.New("invalid namespace")

	// ErrNoConfigFile is returned by Rewrite when the server was started
	// without a configuration file. Its text is the error Redis replies to
	// CONFIG REWRITE in that case (without the leading '-').
	ErrNoConfigFile = errors.New("ERR The server is running without a config file")

	// ErrHelp is returned by Load after it printed the option list because
	// the arguments asked for --help. The caller should exit successfully.
	ErrHelp = errors.New("config: help requested")
)

// ValueError reports a value that an option does not accept. Err holds the
// reason, worded as Redis words it for CONFIG SET (for example "argument must
// be between 0 and 65535 inclusive"). A ValueError matches ErrInvalidValue
// and its reason with errors.Is.
type ValueError struct {
	Option string // the option's canonical name
	Value  string // the value as given
	Err    error  // the reason
}

// Error returns `invalid value "<value>" for "<option>": <reason>`.
func (e *ValueError) Error() string {
	return fmt.Sprintf("invalid value %q for %q: %v", e.Value, e.Option, e.Err)
}

// Unwrap returns ErrInvalidValue and the reason.
func (e *ValueError) Unwrap() []error { return []error{ErrInvalidValue, e.Err} }

// SetError is the error Config.Set returns. Its Error text is exactly the
// error Redis 7.0 replies to CONFIG SET (without the leading '-'), so the
// command layer can send it as is:
//
//	ERR Unknown option or number of arguments for CONFIG SET - '<arg>'
//	ERR CONFIG SET failed (possibly related to argument '<arg>') - <reason>
//
// Err is ErrUnknownOption, ErrImmutable, ErrDuplicateOption or a
// *ValueError, and errors.Is and errors.As see through a SetError to it.
type SetError struct {
	Arg string // the option name as the caller spelled it
	Err error
}

// Error returns the Redis reply text.
func (e *SetError) Error() string {
	if errors.Is(e.Err, ErrUnknownOption) {
		return "ERR Unknown option or number of arguments for CONFIG SET - '" + e.Arg + "'"
	}
	reason := ""
	var ve *ValueError
	switch {
	case errors.As(e.Err, &ve):
		if ve.Err != nil {
			reason = ve.Err.Error()
		}
	case e.Err != nil:
		reason = e.Err.Error()
	}
	if reason == "" {
		return "ERR CONFIG SET failed (possibly related to argument '" + e.Arg + "')"
	}
	return "ERR CONFIG SET failed (possibly related to argument '" + e.Arg + "') - " + reason
}

// Unwrap returns the underlying error.
func (e *SetError) Unwrap() error { return e.Err }

// FileError reports a problem on one line of a configuration file.
type FileError struct {
	Path string // the file as it was named to Load
	Line int    // 1-based line number
	Err  error
}

// Error returns "config: <path>:<line>: <err>".
func (e *FileError) Error() string {
	return fmt.Sprintf("config: %s:%d: %v", e.Path, e.Line, e.Err)
}

// Unwrap returns the underlying error.
func (e *FileError) Unwrap() error { return e.Err }
