package config

import (
	"fmt"
	"strings"
)

// fileValues is what a configuration file sets.
type fileValues struct {
	// values maps canonical option names to the value the file gives them
	// (repeated directives folded in order: the last one wins, except that
	// client-output-buffer-limit lines each update the classes they name).
	values map[string]*value
	// namespaces in the order of their first line; a repeated namespace
	// takes its last token.
	namespaces []NamespaceToken
	// renames are the rename-command lines, in file order.
	renames []CommandRename
}

// lineKind classifies one line of a configuration file.
type lineKind int

const (
	lineBlank     lineKind = iota // empty, whitespace or a '#' comment
	lineBad                       // unbalanced quotes
	lineOption                    // a Cairn option (name or alias)
	lineNamespace                 // namespace.<ns> <token>
	lineRename                    // rename-command <name> <new name>
	lineKvrocks                   // a Kvrocks option Cairn does not implement
	lineUnknown                   // anything else
)

// classifyLine tokenizes one raw line the way Redis reads redis.conf: the
// line is trimmed of spaces, tabs, CR and LF; empty lines and lines starting
// with '#' are comments.
func classifyLine(raw string) (lineKind, []string, error) {
	line := strings.Trim(raw, " \t\r\n")
	if line == "" || line[0] == '#' {
		return lineBlank, nil, nil
	}
	toks, err := Tokenize(line)
	if err != nil {
		return lineBad, nil, err
	}
	if len(toks) == 0 {
		return lineBlank, nil, nil
	}
	name := toks[0]
	switch {
	case len(name) > len(namespacePrefix) && strings.EqualFold(name[:len(namespacePrefix)], namespacePrefix):
		return lineNamespace, toks, nil
	case strings.EqualFold(name, renameDirective):
		return lineRename, toks, nil
	case lookupOption(name) != nil:
		return lineOption, toks, nil
	case IsKvrocksOnly(name):
		return lineKvrocks, toks, nil
	}
	return lineUnknown, toks, nil
}

// splitLines splits file contents into lines, without a final empty line
// when the data ends with a newline.
func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	lines := strings.Split(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// parseFile parses the contents of a kvrocks.conf-style file named path
// (used in messages). It returns the values the file sets and one warning
// per Kvrocks-only directive, or a *FileError for the first bad line.
func parseFile(path string, data []byte, parse valueParser) (*fileValues, []string, error) {
	fv := &fileValues{values: make(map[string]*value)}
	var warnings []string
	for i, raw := range splitLines(data) {
		lineNo := i + 1
		kind, toks, err := classifyLine(raw)
		switch kind {
		case lineBlank:
			continue
		case lineBad:
			return nil, warnings, &FileError{Path: path, Line: lineNo, Err: err}
		case lineUnknown:
			return nil, warnings, &FileError{Path: path, Line: lineNo,
				Err: fmt.Errorf("%w %q", ErrUnknownDirective, toks[0])}
		case lineKvrocks:
			warnings = append(warnings, fmt.Sprintf("%s:%d: %q is a Kvrocks option that Cairn does not support; ignored",
				path, lineNo, strings.ToLower(toks[0])))
		case lineNamespace:
			if len(toks) != 2 {
				return nil, warnings, &FileError{Path: path, Line: lineNo,
					Err: fmt.Errorf("%w for %q", ErrWrongArgs, toks[0])}
			}
			fv.addNamespace(toks[0][len(namespacePrefix):], toks[1])
		case lineRename:
			if len(toks) != 3 {
				return nil, warnings, &FileError{Path: path, Line: lineNo,
					Err: fmt.Errorf("%w for %q", ErrWrongArgs, renameDirective)}
			}
			fv.renames = append(fv.renames, CommandRename{Name: toks[1], NewName: toks[2],
				Source: fmt.Sprintf("%s:%d", path, lineNo)})
		case lineOption:
			o := lookupOption(toks[0])
			args := toks[1:]
			if len(args) == 0 || (len(args) > 1 && !o.MultiToken) {
				return nil, warnings, &FileError{Path: path, Line: lineNo,
					Err: fmt.Errorf("%w for %q", ErrWrongArgs, o.Name)}
			}
			prev := fv.values[o.Name]
			if prev == nil {
				prev, _ = parseValue(o, nil, o.Default)
			}
			v, err := parse(o, prev, strings.Join(args, " "))
			if err != nil {
				return nil, warnings, &FileError{Path: path, Line: lineNo, Err: err}
			}
			fv.values[o.Name] = v
		}
	}
	return fv, warnings, nil
}

func (fv *fileValues) addNamespace(ns, token string) {
	for i := range fv.namespaces {
		if fv.namespaces[i].Namespace == ns {
			fv.namespaces[i].Token = token
			return
		}
	}
	fv.namespaces = append(fv.namespaces, NamespaceToken{Namespace: ns, Token: token})
}

// optionLine renders "name value" so that the file parser reads value back.
func optionLine(o *Option, val string) string {
	if !o.MultiToken {
		return o.Name + " " + quoteToken(val)
	}
	f := strings.Fields(val)
	if len(f) == 0 {
		return o.Name + ` ""`
	}
	for i := range f {
		f[i] = quoteToken(f[i])
	}
	return o.Name + " " + strings.Join(f, " ")
}

// namespaceLine renders "namespace.<ns> <token>".
func namespaceLine(n NamespaceToken) string {
	return quoteToken(namespacePrefix+n.Namespace) + " " + quoteToken(n.Token)
}
