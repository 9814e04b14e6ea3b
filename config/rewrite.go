package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// rewriteMarker precedes the lines Rewrite appends for options the file did
// not mention.
const rewriteMarker = "# Added by CONFIG REWRITE"

// Rewrite implements CONFIG REWRITE: it rewrites the configuration file at
// path (normally c.Path()) so that it holds c's current values, touching as
// little as it can:
//
//   - comments, blank lines, unknown and Kvrocks-only lines, and lines that
//     do not parse are kept verbatim; a file whose first line ends in CRLF
//     keeps CRLF line ends;
//   - the first line of each Cairn option is replaced by "name value" with
//     the current value (quoted when needed so that it reads back the same);
//     later lines of the same option are dropped;
//   - namespace lines get the current token; lines of namespaces that no
//     longer exist, and repeated ones, are dropped;
//   - options not in the file whose value differs from the default, and new
//     namespaces, are appended after a marker comment line.
//
// The new contents go to a temporary file in the same directory, which is
// synced and renamed over the old file (a symbolic link is followed, so
// its target is replaced). A missing file is created. With an empty path
// Rewrite returns ErrNoConfigFile, whose text is Redis's reply; other errors
// wrap the failing file-system operation.
func Rewrite(path string, c *Config) error {
	if path == "" {
		return ErrNoConfigFile
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("config: rewrite: %w", err)
	}
	return writeFileAtomic(path, rewriteContents(data, c))
}

// rewriteContents returns the new contents of a file that held data.
func rewriteContents(data []byte, c *Config) []byte {
	namespaces := c.Namespaces()
	tokens := make(map[string]string, len(namespaces))
	for _, n := range namespaces {
		tokens[n.Namespace] = n.Token
	}
	writtenNS := make(map[string]bool)
	written := make(map[string]bool)
	markerSeen := false

	var out []string
	for _, raw := range splitLines(data) {
		kind, toks, _ := classifyLine(raw)
		switch kind {
		case lineNamespace:
			ns := toks[0][len(namespacePrefix):]
			token, ok := tokens[ns]
			if !ok || writtenNS[ns] {
				continue
			}
			writtenNS[ns] = true
			out = append(out, namespaceLine(NamespaceToken{Namespace: ns, Token: token}))
		case lineOption:
			o := lookupOption(toks[0])
			if written[o.Name] {
				continue
			}
			written[o.Name] = true
			out = append(out, optionLine(o, c.String(o.Name)))
		default:
			if strings.Trim(raw, " \t\r\n") == rewriteMarker {
				markerSeen = true
			}
			out = append(out, strings.TrimSuffix(raw, "\r"))
		}
	}

	var extra []string
	for i := range options {
		o := &options[i]
		if written[o.Name] {
			continue
		}
		def, err := parseValue(o, nil, o.Default)
		if cur := c.String(o.Name); err != nil || cur != def.text {
			extra = append(extra, optionLine(o, cur))
		}
	}
	for _, n := range namespaces {
		if !writtenNS[n.Namespace] {
			extra = append(extra, namespaceLine(n))
		}
	}
	if len(extra) > 0 {
		if !markerSeen {
			out = append(out, rewriteMarker)
		}
		out = append(out, extra...)
	}
	if len(out) == 0 {
		return nil
	}
	// A file written with CRLF line ends keeps them, new lines included.
	eol := "\n"
	if first, _, _ := strings.Cut(string(data), "\n"); strings.HasSuffix(first, "\r") {
		eol = "\r\n"
	}
	return []byte(strings.Join(out, eol) + eol)
}

// writeFileAtomic replaces path with data: it writes a temporary file in
// the same directory, syncs it, renames it over path and syncs the
// directory. The old file's permissions are kept (0644 for a new file).
func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	perm := fs.FileMode(0o644)
	if st, statErr := os.Stat(path); statErr == nil {
		perm = st.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("config: rewrite: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err == nil {
		if err = f.Chmod(perm); err == nil {
			err = f.Sync()
		}
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return fmt.Errorf("config: rewrite: write %s: %w", tmp, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("config: rewrite: %w", err)
	}
	if d, openErr := os.Open(dir); openErr == nil {
		syncErr := d.Sync()
		_ = d.Close()
		if syncErr != nil {
			return fmt.Errorf("config: rewrite: sync directory %s: %w", dir, syncErr)
		}
	}
	return nil
}
