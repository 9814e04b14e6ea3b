// Command cairn is the Cairn server: a Redis-protocol key-value server that
// keeps its data on disk in Pebble.
//
// With no arguments it serves on embedded defaults (127.0.0.1:6666, data in
// ./cairn-data). "-c FILE" reads a kvrocks.conf-style file and "--name
// value" overrides any option; kvrocks.conf.example lists them all.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/cairnkv/cairn/commands"
	"github.com/cairnkv/cairn/config"
	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/pubsub"
	"github.com/cairnkv/cairn/replication"
	"github.com/cairnkv/cairn/server"
	"github.com/cairnkv/cairn/storage"
)

// version is Cairn's own version, reported by INFO as cairn_version.
const version = "0.1.0"

// shutdownGrace bounds how long in-flight commands get at shutdown.
const shutdownGrace = 4 * time.Second

func main() { os.Exit(run()) }

func run() int {
	startGCTuner()
	cfg, warnings, err := config.Load(os.Args[1:], os.Environ(),
		config.Validator{Option: "notify-keyspace-events", Check: notify.Canonical})
	if errors.Is(err, config.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "cairn: %v\n", err)
		return 1
	}
	for _, r := range cfg.CommandRenames() {
		if err := commands.Rename(r.Name, r.NewName); err != nil {
			fmt.Fprintf(os.Stderr, "cairn: config: %s: rename-command: %v\n", r.Source, err)
			return 1
		}
	}
	log, closeLog, err := newLogger(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cairn: %v\n", err)
		return 1
	}
	defer closeLog()
	for _, w := range warnings {
		log.Warn(w)
	}
	if err := setSchedulerSlice(int(cfg.Int("scheduler-slice-us"))); err != nil {
		log.Warn("the kernel's default scheduler slice stays", "error", err)
	}
	if err := cfg.OnChange("log-level", func(v string) { log.SetLevel(hclogLevel(v)) }); err != nil {
		log.Error("cannot watch log-level", "error", err)
		return 1
	}

	dir := cfg.String("dir")
	log.Info("starting cairn", "version", version, "dir", dir, "config", cfg.Path())
	store, err := storage.Open(storage.Options{
		Dir:             dir,
		Sync:            cfg.Bool("rocksdb.write_options.sync"),
		BlockCacheBytes: cfg.Int("rocksdb.block_cache_size") << 20,
		RowCacheBytes:   cfg.Int("rocksdb.row_cache_size") << 20,
		InlineValueMax:  int(cfg.Bytes("string-value-inline-max")),
		Logger:          log.Named("storage"),
	})
	if err != nil {
		if errors.Is(err, storage.ErrLocked) {
			log.Error("the data dir is in use by another cairn process; refusing to start", "dir", dir)
		} else {
			log.Error("cannot open storage", "dir", dir, "error", err)
		}
		return 1
	}
	if err := cfg.OnChange("rocksdb.write_options.sync", func(v string) { store.SetSync(v == "yes") }); err != nil {
		log.Error("cannot watch rocksdb.write_options.sync", "error", err)
		store.Close()
		return 1
	}

	hub := pubsub.NewHub()
	emitter := notify.NewEmitter(hub)
	if err := watchNotifyFlags(cfg, emitter); err != nil {
		log.Error("cannot watch notify-keyspace-events", "error", err)
		store.Close()
		return 1
	}
	env := &commands.Env{
		Store:   store,
		Config:  cfg,
		PubSub:  hub,
		Notify:  emitter,
		Log:     log,
		Clients: commands.NewClientRegistry(),
		Stats:   &commands.Stats{},
		Started: time.Now(),
		Version: version,
	}
	store.SetWriteObserver(env)
	replLog, err := replication.OpenLog(replication.LogOptions{
		Dir:          filepath.Join(dir, "replication-log"),
		RetainBytes:  cfg.Bytes("repl-log-max-bytes"),
		RetainAge:    time.Duration(cfg.Int("repl-log-max-age")) * time.Second,
		MemoryBytes:  16 << 20,
		SegmentBytes: debugSegmentBytes(log),
		Logger:       log.Named("replication-log"),
	})
	if err != nil {
		log.Error("cannot open the replication log", "error", err)
		store.Close()
		return 1
	}
	node, err := replication.NewNode(replication.Options{
		DataDir:    dir,
		Store:      store,
		Log:        replLog,
		Notify:     emitter,
		Logger:     log.Named("replication"),
		Port:       int(cfg.Int("port")),
		MasterAuth: func() string { return cfg.String("masterauth") },
		Announce: func() (string, int) {
			return cfg.String("replica-announce-ip"), int(cfg.Int("replica-announce-port"))
		},
		SendTimeout: time.Duration(cfg.Int("repl-timeout")) * time.Second,
	})
	if err != nil {
		log.Error("cannot start replication", "error", err)
		replLog.Close()
		store.Close()
		return 1
	}
	// Every committed batch, local or replicated, goes to the log in
	// offset order. A log that cannot be written is a storage fault.
	store.SetCommitHook(func(offset uint64, repr []byte) {
		if err := replLog.Append(offset, repr); err != nil {
			log.Error("fatal: cannot append to the replication log", "offset", offset, "error", err)
			os.Exit(1)
		}
	})
	env.Repl = node
	if os.Getenv("CAIRN_DEBUG_FAULTS") == "1" {
		log.Warn("test-only fault injection is enabled (CAIRN_DEBUG_FAULTS=1): DEBUG COMMIT-FAULT, COMMIT-PAUSE, WAL-FAULT and TABLE-FAULT work")
		env.InstallFaults()
	}
	if err := env.LoadNamespaces(); err != nil {
		log.Error("cannot load namespaces from the config file", "error", err)
		store.Close()
		return 1
	}
	nlibs, err := env.LoadFunctions()
	if err != nil {
		log.Error("cannot load the function libraries", "error", err)
		store.Close()
		return 1
	}
	log.Info("loaded function libraries", "libraries", nlibs)
	store.SetLibraryObserver(env.ApplyLibraryChanges)
	srv := server.New(env)
	node.SetFullSyncHook(srv.DisconnectKeyspaceSubscribers)
	if host, port, ok := cfg.Master(); ok {
		node.ReplicaOf(host, port)
	}
	if err := srv.Listen(); err != nil {
		log.Error("cannot listen", "error", err)
		store.Close()
		return 1
	}
	if pid := cfg.String("pidfile"); pid != "" {
		if err := os.WriteFile(pid, fmt.Appendf(nil, "%d\n", os.Getpid()), 0o644); err != nil {
			log.Warn("cannot write pidfile", "path", pid, "error", err)
		}
		defer os.Remove(pid)
	}
	served := make(chan struct{})
	go func() {
		srv.Serve()
		close(served)
	}()
	log.Info("ready to accept connections")

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	for stopping := false; !stopping; {
		select {
		case sig := <-sigs:
			log.Info("received signal; shutting down", "signal", sig.String())
			stopping = prepareShutdown(env, cfg, sig, sigs)
		case <-srv.ShutdownRequested():
			log.Info("SHUTDOWN requested; shutting down")
			stopping = true
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	code := 0
	if err := srv.Stop(ctx); err != nil {
		log.Warn("shutdown did not finish cleanly", "error", err)
	}
	<-served
	if err := node.Close(); err != nil {
		log.Error("closing replication failed", "error", err)
		code = 1
	}
	if err := replLog.Close(); err != nil {
		log.Error("closing the replication log failed", "error", err)
		code = 1
	}
	if err := store.Close(); err != nil {
		log.Error("closing storage failed", "error", err)
		code = 1
	}
	log.Info("bye")
	return code
}

// watchNotifyFlags makes the emitter follow notify-keyspace-events, whose
// values notify.Canonical validates and canonicalizes (Load installs it).
func watchNotifyFlags(cfg *config.Config, e *notify.Emitter) error {
	const name = "notify-keyspace-events"
	apply := func(v string) {
		if f, err := notify.ParseFlags(v); err == nil {
			e.SetFlags(f)
		}
	}
	apply(cfg.String(name))
	return cfg.OnChange(name, apply)
}

// newLogger builds the hclog logger the log-level and log-dir options ask
// for.
func newLogger(cfg *config.Config) (hclog.InterceptLogger, func(), error) {
	var out io.Writer = os.Stderr
	closeFn := func() {}
	switch d := cfg.String("log-dir"); d {
	case "", "stderr":
	case "stdout":
		out = os.Stdout
	default:
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, nil, fmt.Errorf("log-dir %s: %w", d, err)
		}
		f, err := os.OpenFile(filepath.Join(d, "cairn.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("log-dir %s: %w", d, err)
		}
		out, closeFn = f, func() { f.Close() }
	}
	l := hclog.NewInterceptLogger(&hclog.LoggerOptions{
		Name:   "cairn",
		Level:  hclogLevel(cfg.String("log-level")),
		Output: out,
	})
	return l, closeFn, nil
}

// hclogLevel maps Redis's and Kvrocks's level names onto hclog's.
func hclogLevel(name string) hclog.Level {
	switch name {
	case "debug", "verbose":
		return hclog.Debug
	case "info", "notice":
		return hclog.Info
	case "warning":
		return hclog.Warn
	case "error", "fatal":
		return hclog.Error
	}
	return hclog.Info
}

// prepareShutdown runs the wait for lagging replicas that a signal
// starts (commands.Env.PrepareShutdown), with the flags of
// shutdown-on-sigterm or shutdown-on-sigint: now skips it. A second
// signal meanwhile ends the wait at once. It reports whether the process
// is to stop: SHUTDOWN ABORT cancels it.
func prepareShutdown(env *commands.Env, cfg *config.Config, sig os.Signal, sigs <-chan os.Signal) bool {
	option := "shutdown-on-sigterm"
	if sig == syscall.SIGINT {
		option = "shutdown-on-sigint"
	}
	now := slices.Contains(strings.Fields(cfg.String(option)), "now")
	done := make(chan bool, 1)
	go func() { done <- env.PrepareShutdown(now) }()
	for {
		select {
		case stop := <-done:
			if !stop {
				env.Log.Warn("shutdown aborted; serving on")
			}
			return stop
		case sig := <-sigs:
			env.Log.Warn("second signal: shutting down without waiting for replicas", "signal", sig.String())
			env.HurryShutdown()
		}
	}
}

// debugSegmentBytes returns the replication log's segment size that a
// test asks for with CAIRN_DEBUG_REPL_SEGMENT_BYTES (with
// CAIRN_DEBUG_FAULTS=1), so that trimming the log takes a few megabytes
// of writes rather than hundreds; otherwise 0, the log's default.
func debugSegmentBytes(log hclog.Logger) int64 {
	v := os.Getenv("CAIRN_DEBUG_REPL_SEGMENT_BYTES")
	if v == "" || os.Getenv("CAIRN_DEBUG_FAULTS") != "1" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		log.Warn("ignoring CAIRN_DEBUG_REPL_SEGMENT_BYTES: not a positive number", "value", v)
		return 0
	}
	log.Warn("test-only replication log segments", "bytes", n)
	return n
}
