package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// EnvPrefix starts the name of every environment variable Load reads.
const EnvPrefix = "CAIRN_"

// EnvName returns the environment variable that sets option name:
// EnvPrefix followed by the name in upper case with '-' and '.' replaced
// by '_' (CAIRN_SLAVE_READ_ONLY, CAIRN_ROCKSDB_WRITE_OPTIONS_SYNC).
func EnvName(name string) string {
	return EnvPrefix + strings.NewReplacer("-", "_", ".", "_").Replace(strings.ToUpper(name))
}

// helpOutput is where Load prints --help; tests replace it.
var helpOutput io.Writer = os.Stdout

// Load builds the start-up configuration from four layers, each overriding
// the one before:
//
//  1. the defaults of the options table;
//  2. the configuration file named by -c FILE or --config FILE (kvrocks.conf
//     syntax, see Tokenize), if any;
//  3. the environment variables CAIRN_<NAME> found in environ (as
//     os.Environ returns them; see EnvName), empty ones being ignored;
//  4. --<name> <value> (or --<name>=<value>) arguments, one per option, every
//     value a string as in the file (--slave-read-only no). As with
//     redis-server, the words after --<name> up to the next --option (or
//     -c, -h) make its value together, joined by spaces: --slaveof
//     127.0.0.1 6666 is --slaveof "127.0.0.1 6666".
//
// Every value goes through the same checks as CONFIG SET, including the
// validators given, which the Config keeps for Set. The first invalid
// one fails Load with a one-line error naming where it came from (file and
// line, variable or flag), the option and the value. An unknown directive,
// flag or stray argument is an error; a Kvrocks option that Cairn does not
// implement is ignored with a warning, one per occurrence, returned for the
// caller to log; so is a CAIRN_ variable naming one. Other CAIRN_
// variables are not options and are ignored.
//
// With -h or --help, Load prints Usage to standard output and returns
// ErrHelp.
//
// Load uses viper to layer the values (it is not used afterwards: viper is
// not safe for concurrent use). The returned Config records the file's
// absolute path for Rewrite. OnChange hooks are not called for loaded
// values.
func Load(args []string, environ []string, validators ...Validator) (*Config, []string, error) {
	args, warnings := normalizeFlags(args)
	c := New()
	for _, vd := range validators {
		e := c.entry(vd.Option)
		switch {
		case e == nil:
			return nil, warnings, fmt.Errorf("config: validator for %q: %w", vd.Option, ErrUnknownOption)
		case vd.Check == nil:
			return nil, warnings, fmt.Errorf("config: validator for %q: no function", vd.Option)
		}
		e.validator = vd.Check
	}
	parse := func(o *Option, prev *value, raw string) (*value, error) { return c.entries[o.Name].parse(prev, raw) }

	fs := pflag.NewFlagSet("cairn", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	configPath := fs.StringP("config", "c", "", "configuration file in kvrocks.conf syntax")
	help := fs.BoolP("help", "h", false, "print the options and exit")
	for _, o := range options {
		fs.String(o.Name, o.Default, o.Doc)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			*help = true
		} else {
			return nil, warnings, fmt.Errorf("config: %w", err)
		}
	}
	if *help {
		if _, err := io.WriteString(helpOutput, Usage()); err != nil {
			return nil, warnings, fmt.Errorf("config: print help: %w", err)
		}
		return nil, warnings, ErrHelp
	}
	if fs.NArg() > 0 {
		return nil, warnings, fmt.Errorf("config: unexpected argument %q (options are given as --name value)", fs.Arg(0))
	}

	// below holds, per option, the value of the highest layer seen so far:
	// a client-output-buffer-limit value only updates the classes it names.
	below := make(map[string]*value, len(options))
	v := viper.NewWithOptions(viper.KeyDelimiter("::")) // option names contain dots
	for i := range options {
		o := &options[i]
		v.SetDefault(o.Name, o.Default)
		below[o.Name], _ = parseValue(o, nil, o.Default)
	}

	fv := &fileValues{}
	absPath := ""
	if *configPath != "" {
		data, err := os.ReadFile(*configPath)
		if err != nil {
			return nil, warnings, fmt.Errorf("config: %w", err)
		}
		var fileWarnings []string
		fv, fileWarnings, err = parseFile(*configPath, data, parse)
		warnings = append(warnings, fileWarnings...)
		if err != nil {
			return nil, warnings, err
		}
		fileMap := make(map[string]any, len(fv.values))
		for name, val := range fv.values {
			fileMap[name] = val.text
			below[name] = val
		}
		if err := v.MergeConfigMap(fileMap); err != nil {
			return nil, warnings, fmt.Errorf("config: %s: %w", *configPath, err)
		}
		if absPath, err = filepath.Abs(*configPath); err != nil {
			return nil, warnings, fmt.Errorf("config: %w", err)
		}
	}

	envMap, envWarnings, err := envValues(environ, below, parse)
	warnings = append(warnings, envWarnings...)
	if err != nil {
		return nil, warnings, err
	}
	if err := v.MergeConfigMap(envMap); err != nil {
		return nil, warnings, fmt.Errorf("config: environment: %w", err)
	}

	for i := range options {
		o := &options[i]
		f := fs.Lookup(o.Name)
		if f.Changed {
			val, err := parse(o, below[o.Name], f.Value.String())
			if err != nil {
				return nil, warnings, fmt.Errorf("config: flag --%s: %w", o.Name, err)
			}
			if err := f.Value.Set(val.text); err != nil {
				return nil, warnings, fmt.Errorf("config: flag --%s: %w", o.Name, err)
			}
		}
		if err := v.BindPFlag(o.Name, f); err != nil {
			return nil, warnings, fmt.Errorf("config: flag --%s: %w", o.Name, err)
		}
	}

	c.path = absPath
	for i := range options {
		o := &options[i]
		raw := v.GetString(o.Name)
		val, err := parse(o, nil, raw)
		if err != nil { // every layer was checked above; this is a safety net
			return nil, warnings, fmt.Errorf("config: %w", err)
		}
		c.entries[o.Name].val.Store(val)
	}
	if err := validateNamespaces(fv.namespaces, c.String("requirepass")); err != nil {
		return nil, warnings, fmt.Errorf("config: %s: %w", *configPath, err)
	}
	c.namespaces = fv.namespaces
	c.renames = fv.renames
	return c, warnings, nil
}

// envValues reads the CAIRN_ variables of environ, checks each against the
// value below it and returns the canonical values by option name.
func envValues(environ []string, below map[string]*value, parse valueParser) (map[string]any, []string, error) {
	byEnv := make(map[string]*Option, len(options))
	for i := range options {
		byEnv[EnvName(options[i].Name)] = &options[i]
	}
	kvrocksEnv := make(map[string]string, len(kvrocksOnly))
	for name := range kvrocksOnly {
		kvrocksEnv[EnvName(name)] = name
	}
	out := make(map[string]any)
	var warnings []string
	for _, kv := range environ {
		key, val, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(key, EnvPrefix) || val == "" {
			continue
		}
		o := byEnv[key]
		if o == nil {
			if name, ok := kvrocksEnv[key]; ok {
				warnings = append(warnings, fmt.Sprintf("environment variable %s: %q is a Kvrocks option that Cairn does not support; ignored", key, name))
			} else if strings.HasPrefix(key, EnvName("rocksdb.")) {
				warnings = append(warnings, fmt.Sprintf("environment variable %s: a Kvrocks rocksdb option that Cairn does not support; ignored", key))
			}
			// Other CAIRN_ variables (CAIRN_BIN, CAIRN_DEBUG_FAULTS, ...)
			// belong to tools and tests, not to the options.
			continue
		}
		parsed, err := parse(o, below[o.Name], val)
		if err != nil {
			return nil, warnings, fmt.Errorf("config: environment variable %s: %w", key, err)
		}
		below[o.Name] = parsed
		out[o.Name] = parsed.text
	}
	return out, warnings, nil
}

// normalizeFlags reads the command line as redis-server does: the words
// after a --<name> argument, up to the next argument that starts with "--"
// or is -c or -h, make its value, joined by spaces. It returns the
// arguments with each such value as one argument and an option's alias
// (--replicaof) replaced by its name, without the flags (and their values)
// that name a Kvrocks option Cairn does not implement, and one warning for
// each of those. Everything after a "--" argument is left alone.
func normalizeFlags(args []string) (out, warnings []string) {
	out = make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...), warnings
		}
		if !strings.HasPrefix(a, "--") {
			out = append(out, a)
			continue
		}
		name, value, hasValue := strings.Cut(a[2:], "=")
		j := i + 1 // past the flag's words
		if !hasValue && a != "--help" {
			for j < len(args) && !strings.HasPrefix(args[j], "--") && args[j] != "-c" && args[j] != "-h" {
				j++
			}
		}
		words := args[i+1 : j]
		i = j - 1
		if IsKvrocksOnly(name) {
			warnings = append(warnings, fmt.Sprintf("flag --%s: %q is a Kvrocks option that Cairn does not support; ignored",
				name, strings.ToLower(name)))
			continue
		}
		if o := lookupOption(name); o != nil && o.Name != name {
			a = "--" + o.Name
			if hasValue {
				a += "=" + value
			}
		}
		out = append(out, a)
		if len(words) > 0 {
			out = append(out, strings.Join(words, " "))
		}
	}
	return out, warnings
}

// Usage returns the text --help prints: the command-line syntax and every
// option with its kind, default and description.
func Usage() string {
	var b strings.Builder
	b.WriteString(`Usage: cairn [-c FILE] [--<option> <value> ...]

  -c, --config FILE   configuration file in kvrocks.conf syntax
  -h, --help          print this help and exit

Every option below can be set, from lowest to highest precedence, by its
default, the configuration file, the environment variable CAIRN_<OPTION>
(upper case, '-' and '.' replaced by '_') and the flag --<option> <value>.
Options marked * can also be changed at runtime with CONFIG SET.

`)
	for _, o := range options {
		mark := " "
		if o.Mutable {
			mark = "*"
		}
		fmt.Fprintf(&b, "%s --%s <%s>\n      %s\n      default: %s\n", mark, o.Name, o.Kind, o.Doc, quoteToken(o.Default))
	}
	return b.String()
}
