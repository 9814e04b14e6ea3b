package config

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// value is one option's parsed value. It is immutable once stored: a Config
// swaps whole values atomically, so readers never see a torn one.
type value struct {
	text   string        // canonical rendering, as CONFIG GET shows it
	num    int64         // KindInt and KindMemory
	flag   bool          // KindBool
	limits *BufferLimits // client-output-buffer-limit only
	floats []float64     // latency-tracking-info-percentiles only
}

// Reasons a value is refused, worded as Redis 7.0 words them in CONFIG SET
// replies (src/config.c), or in the same style where Redis has no such check.
var (
	errNotInteger      = errors.New("argument couldn't be parsed into an integer")
	errNotMemory       = errors.New("argument must be a memory value")
	errNotYesNo        = errors.New("argument must be 'yes' or 'no'")
	errBufArgs         = errors.New("Wrong number of arguments in buffer limit configuration.")
	errBufClass        = errors.New("Invalid client class specified in buffer limit configuration.")
	errBufNumbers      = errors.New("Error in hard, soft or soft_seconds setting in buffer limit configuration.")
	errBindEmpty       = errors.New("argument must list at least one address")
	errBindMany        = errors.New("Too many bind addresses specified.")
	errSlaveof         = errors.New("argument must be '<host> <port>', 'no one' or empty")
	errPercentile      = errors.New("Invalid latency-tracking-info-percentiles parameters")
	errPercentileRange = errors.New("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
	errDaemonize       = errors.New("daemonize yes is not supported: Cairn runs in the foreground, use a supervisor")
	errWritableReplica = errors.New("only 'yes' is supported: Cairn replicas are read-only")
	errShutdownFlags   = errors.New("argument(s) must be one of the following: default, save, nosave, now, force")
)

// maxBindAddrs is the most addresses bind accepts, as in Redis.
const maxBindAddrs = 16

func errRange(lo, hi int64) error {
	return fmt.Errorf("argument must be between %d and %d inclusive", lo, hi)
}

// valueParser parses raw for option o, as parseValue does, and through the
// option's validator when Load was given one.
type valueParser func(o *Option, prev *value, raw string) (*value, error)

// parseValue parses raw for option o. prev is the option's current value
// (nil when there is none yet). The returned error is a *ValueError.
func parseValue(o *Option, prev *value, raw string) (*value, error) {
	v, err := parseKind(o, raw)
	if err == nil && o.check != nil {
		err = o.check(prev, v)
	}
	if err != nil {
		return nil, &ValueError{Option: o.Name, Value: raw, Err: err}
	}
	return v, nil
}

func parseKind(o *Option, raw string) (*value, error) {
	switch o.Kind {
	case KindBool:
		switch strings.ToLower(raw) {
		case "yes":
			return &value{text: "yes", flag: true}, nil
		case "no":
			return &value{text: "no"}, nil
		}
		return nil, errNotYesNo
	case KindInt:
		n, ok := parseInteger(raw)
		if !ok {
			return nil, errNotInteger
		}
		if n < o.Min || n > o.Max {
			return nil, errRange(o.Min, o.Max)
		}
		return &value{text: strconv.FormatInt(n, 10), num: n}, nil
	case KindMemory:
		u, ok := parseMemory(raw)
		if !ok {
			return nil, errNotMemory
		}
		if u > math.MaxInt64 || int64(u) < o.Min || int64(u) > o.Max {
			return nil, errRange(o.Min, o.Max)
		}
		return &value{text: strconv.FormatUint(u, 10), num: int64(u)}, nil
	case KindEnum:
		low := strings.ToLower(raw)
		for _, e := range o.Enum {
			if low == e {
				return &value{text: e}, nil
			}
		}
		return nil, errors.New("argument(s) must be one of the following: " + strings.Join(o.Enum, ", "))
	default:
		if o.MultiToken {
			raw = strings.Join(strings.Fields(raw), " ")
		}
		return &value{text: raw}, nil
	}
}

// parseInteger parses s as Redis's string2ll does: an optional '-', then
// digits without leading zeros ("0" alone is zero), nothing else, and no
// overflow.
func parseInteger(s string) (int64, bool) {
	if s == "0" {
		return 0, true
	}
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || digits[0] < '1' || digits[0] > '9' {
		return 0, false
	}
	for i := 1; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// parseMemory parses s as Redis's memtoull does: decimal digits followed by
// an optional unit b, k (1000), kb (1024), m, mb, g or gb in any case. As in
// Redis, no digits at all means zero ("" and "mb" are 0). A value too large
// for 64 bits saturates (the caller's range check refuses it) unless the
// unit would overflow it, which is an error.
func parseMemory(s string) (uint64, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	var mul uint64
	switch strings.ToLower(s[i:]) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1024
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1024 * 1024
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1024 * 1024 * 1024
	default:
		return 0, false
	}
	if i >= 128 { // Redis copies the digits into a 128-byte buffer.
		return 0, false
	}
	var n uint64
	if i > 0 {
		var err error
		n, err = strconv.ParseUint(s[:i], 10, 64)
		if err != nil {
			n = math.MaxUint64 // strtoull saturates.
		}
	}
	if n > math.MaxUint64/mul {
		return 0, false
	}
	return n * mul, true
}

// ParseMemorySize parses a memory size the way redis.conf and CONFIG SET
// do: decimal digits with an optional unit b, k (1000), kb (1024), m (10^6),
// mb (2^20), g (10^9) or gb (2^30), in any case, as in "512mb" or "100k".
// It returns an error for anything else, for negative numbers and for sizes
// beyond math.MaxInt64 bytes. As in Redis, a unit without digits (or the
// empty string) is zero.
func ParseMemorySize(s string) (int64, error) {
	n, ok := parseMemory(s)
	if !ok || n > math.MaxInt64 {
		return 0, fmt.Errorf("config: %q: %w", s, errNotMemory)
	}
	return int64(n), nil
}

// ClientClass names a class of clients for output buffer limits.
type ClientClass int

const (
	// ClientNormal is an ordinary client.
	ClientNormal ClientClass = iota
	// ClientReplica is a replica connected to this node.
	ClientReplica
	// ClientPubSub is a client subscribed to at least one channel or pattern.
	ClientPubSub
)

// String returns the class's name as CONFIG GET renders it (Redis 7.0 still
// says "slave").
func (c ClientClass) String() string {
	switch c {
	case ClientNormal:
		return "normal"
	case ClientReplica:
		return "slave"
	case ClientPubSub:
		return "pubsub"
	}
	return "unknown"
}

// BufferLimit is the output buffer limit of one client class. A client whose
// pending output exceeds Hard bytes, or stays above Soft bytes for
// SoftSeconds seconds, is disconnected. Zero disables a limit.
type BufferLimit struct {
	Hard        int64
	Soft        int64
	SoftSeconds int64
}

// BufferLimits holds the limits of every client class, indexed by
// ClientClass.
type BufferLimits [3]BufferLimit

// String renders the limits as CONFIG GET client-output-buffer-limit does.
func (l *BufferLimits) String() string {
	var b strings.Builder
	for c := ClientNormal; c <= ClientPubSub; c++ {
		if c > ClientNormal {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s %d %d %d", c, l[c].Hard, l[c].Soft, l[c].SoftSeconds)
	}
	return b.String()
}

// parseClientClass accepts the class names Redis accepts in
// client-output-buffer-limit (master is a class in Redis but not here).
func parseClientClass(s string) (ClientClass, bool) {
	switch strings.ToLower(s) {
	case "normal":
		return ClientNormal, true
	case "slave", "replica":
		return ClientReplica, true
	case "pubsub":
		return ClientPubSub, true
	}
	return 0, false
}

// checkBufferLimits parses "<class> <hard> <soft> <soft-seconds>" groups and
// applies them over prev, as Redis does: classes not named keep their
// limits, and an empty value changes nothing.
func checkBufferLimits(prev, v *value) error {
	f := strings.Fields(v.text)
	if len(f)%4 != 0 {
		return errBufArgs
	}
	var limits BufferLimits
	if prev != nil && prev.limits != nil {
		limits = *prev.limits
	}
	for i := 0; i < len(f); i += 4 {
		class, ok := parseClientClass(f[i])
		if !ok {
			return errBufClass
		}
		hard, ok1 := parseMemory(f[i+1])
		soft, ok2 := parseMemory(f[i+2])
		secs, err := strconv.ParseInt(f[i+3], 10, 64)
		if !ok1 || !ok2 || err != nil || secs < 0 || hard > math.MaxInt64 || soft > math.MaxInt64 {
			return errBufNumbers
		}
		limits[class] = BufferLimit{Hard: int64(hard), Soft: int64(soft), SoftSeconds: secs}
	}
	v.limits = &limits
	v.text = limits.String()
	return nil
}

func checkBind(_, v *value) error {
	n := len(strings.Fields(v.text))
	switch {
	case n == 0:
		return errBindEmpty
	case n > maxBindAddrs:
		return errBindMany
	}
	return nil
}

// checkSlaveof accepts "", "no one" (stored as "") or "<host> <port>" with
// a port in 1..65535.
func checkSlaveof(_, v *value) error {
	f := strings.Fields(v.text)
	switch {
	case len(f) == 0:
		v.text = ""
		return nil
	case len(f) == 2 && strings.EqualFold(f[0], "no") && strings.EqualFold(f[1], "one"):
		v.text = ""
		return nil
	case len(f) != 2:
		return errSlaveof
	}
	port, ok := parseInteger(f[1])
	if !ok {
		return errSlaveof
	}
	if port < 1 || port > 65535 {
		return fmt.Errorf("port %w", errRange(1, 65535))
	}
	v.text = f[0] + " " + f[1]
	return nil
}

// checkHz clamps hz into 1..500 as Redis does.
func checkHz(_, v *value) error {
	v.num = min(max(v.num, 1), 500)
	v.text = strconv.FormatInt(v.num, 10)
	return nil
}

// checkPercentiles parses a list of percentiles separated by spaces, each
// within 0..100, and renders each in its shortest decimal form. (Redis
// refuses two spaces in a row, as an empty percentile; a multi-token
// option's spaces are already collapsed here.)
func checkPercentiles(_, v *value) error {
	if v.text == "" {
		return nil
	}
	tokens := strings.Split(v.text, " ")
	v.floats = make([]float64, len(tokens))
	for i, tok := range tokens {
		f, err := strconv.ParseFloat(tok, 64)
		if err != nil || math.IsNaN(f) {
			return errPercentile
		}
		if f < 0 || f > 100 {
			return errPercentileRange
		}
		v.floats[i] = f
		tokens[i] = strconv.FormatFloat(f, 'f', -1, 64)
	}
	v.text = strings.Join(tokens, " ")
	return nil
}

// shutdownFlags are the flags shutdown-on-sigterm and shutdown-on-sigint
// take, in the order CONFIG GET lists them.
var shutdownFlags = []string{"save", "nosave", "now", "force"}

// checkShutdownFlags accepts default or a list of shutdownFlags (any case,
// repeats allowed), and renders the set in shutdownFlags' order, default
// when it is empty, as Redis renders these options.
func checkShutdownFlags(_, v *value) error {
	toks := strings.Fields(strings.ToLower(v.text))
	if len(toks) == 0 {
		return errShutdownFlags
	}
	set := map[string]bool{}
	for _, tok := range toks {
		if tok != "default" && !slices.Contains(shutdownFlags, tok) {
			return errShutdownFlags
		}
		set[tok] = true
	}
	var out []string
	for _, f := range shutdownFlags {
		if set[f] {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		out = []string{"default"}
	}
	v.text = strings.Join(out, " ")
	return nil
}

// onlyValue returns a check that accepts want alone, refusing anything
// else with why.
func onlyValue(want, why string) func(_, v *value) error {
	return func(_, v *value) error {
		if v.text != want {
			return fmt.Errorf("%s: only %q is accepted", why, want)
		}
		return nil
	}
}

// checkSchedulerSlice accepts 0 (the kernel's default) or the range the
// kernel takes, 100 µs to 100 ms.
func checkSchedulerSlice(_, v *value) error {
	if v.num != 0 && v.num < 100 {
		return fmt.Errorf("argument must be 0 or between 100 and 100000 inclusive")
	}
	return nil
}

func checkDaemonize(_, v *value) error {
	if v.flag {
		return errDaemonize
	}
	return nil
}

// checkReadOnlyReplicas refuses slave-read-only no: writable replicas
// would diverge from their primary, and Cairn does not offer them.
func checkReadOnlyReplicas(_, v *value) error {
	if !v.flag {
		return errWritableReplica
	}
	return nil
}
