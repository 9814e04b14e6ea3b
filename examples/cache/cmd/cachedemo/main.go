// Command cachedemo shows examples/cache at work: it reads a few keys
// through a cache in front of a Cairn replica, once per interval, and
// prints each read (hit or replica read) and each invalidation the replica
// publishes. With -primary it also writes to those keys on the primary, so
// the invalidations come by themselves; otherwise write with redis-cli.
//
//	bin/cairn --port 6666 --dir /tmp/primary --notify-keyspace-events KEA &
//	bin/cairn --port 6667 --dir /tmp/replica --notify-keyspace-events KEA --slaveof "127.0.0.1 6666" &
//	go run ./examples/cache/cmd/cachedemo -replica 127.0.0.1:6667 -primary 127.0.0.1:6666
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/cairnkv/cairn/examples/cache"
	"github.com/redis/go-redis/v9"
)

func main() {
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	if err := run(); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

func run() error {
	replicaAddr := flag.String("replica", "127.0.0.1:6667", "the replica to read from and subscribe to (host:port)")
	primaryAddr := flag.String("primary", "", "if set, a primary (host:port) to write random values to")
	password := flag.String("password", "", "AUTH password of both nodes, if any")
	keyList := flag.String("keys", "user:1,user:2,user:3", "comma-separated keys to read")
	interval := flag.Duration("interval", time.Second, "time between two rounds of reads")
	duration := flag.Duration("duration", 0, "stop after this long (0: run until interrupted)")
	flag.Parse()
	keys := strings.Split(*keyList, ",")
	if *keyList == "" || *interval <= 0 {
		return errors.New("cachedemo: -keys must not be empty and -interval must be positive")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}

	replica := redis.NewClient(&redis.Options{Addr: *replicaAddr, Password: *password})
	defer replica.Close()
	if err := replica.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("cachedemo: replica %s: %w", *replicaAddr, err)
	}
	c, err := cache.New(replica, cache.Options{
		OnInvalidate: func(event, key string) { log.Printf("invalidated %q (%s)", key, event) },
		OnSubscribed: func() { log.Printf("subscribed to %s on %s", cache.DefaultPattern, *replicaAddr) },
		OnSubscriptionLost: func(err error) {
			log.Printf("subscription down, cache cleared: %v", err)
		},
	})
	if err != nil {
		return fmt.Errorf("cachedemo: %w", err)
	}
	defer c.Close()
	if err := c.WaitReady(ctx); err != nil {
		return fmt.Errorf("cachedemo: %w", err)
	}

	var primary *redis.Client
	if *primaryAddr != "" {
		primary = redis.NewClient(&redis.Options{Addr: *primaryAddr, Password: *password})
		defer primary.Close()
	}

	tick := time.NewTicker(*interval)
	defer tick.Stop()
	for round := 1; ; round++ {
		for _, key := range keys {
			before := c.Stats().Hits
			value, found, err := c.Get(ctx, key)
			switch {
			case ctx.Err() != nil:
			case err != nil:
				log.Printf("get %q: %v", key, err)
			default:
				from := "replica"
				if c.Stats().Hits > before {
					from = "cache"
				}
				if !found {
					value = "(nil)"
				}
				log.Printf("get %q = %s [%s]", key, value, from)
			}
		}
		s := c.Stats()
		log.Printf("stats: hits %d, misses %d, bypasses %d, invalidations %d, resets %d, entries %d",
			s.Hits, s.Misses, s.Bypasses, s.Invalidations, s.Resets, s.Entries)
		// A write every other round: its invalidation shows up before the
		// next round of reads, which then go to the replica once.
		if primary != nil && round%2 == 1 {
			key := keys[rand.IntN(len(keys))]
			value := fmt.Sprintf("v%d@%s", round, time.Now().Format("15:04:05"))
			if err := primary.Set(ctx, key, value, 0).Err(); err != nil && ctx.Err() == nil {
				log.Printf("SET %q on the primary: %v", key, err)
			} else if err == nil {
				log.Printf("wrote %q = %q on the primary", key, value)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
