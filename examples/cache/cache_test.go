package cache

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestEventName(t *testing.T) {
	for channel, want := range map[string]string{
		"__keyevent@0__:set":                    "set",
		"__keyevent@0__:rename_from":            "rename_from",
		"__keyevent@ns:tenant%20A__:del":        "del",
		"__keyevent@ns:a__b____:expired":        "expired",
		"__keyspace@0__:user:1":                 "",
		"news":                                  "",
		"__keyevent@0__":                        "",
		"__keyevent@0__:cachetest-mark":         "cachetest-mark",
		"__keyevent@ns:x%3A__%3A__:incrbyfloat": "incrbyfloat",
	} {
		if got := EventName(channel); got != want {
			t.Errorf("EventName(%q) = %q; want %q", channel, got, want)
		}
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	if _, err := New(nil, Options{}); err == nil {
		t.Error("New(nil) succeeded")
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	for _, o := range []Options{
		{Pattern: "__keyspace@0__:*"},
		{MaxEntries: -1},
		{MaxAge: -time.Second},
		{PingInterval: -time.Second},
	} {
		if _, err := New(rdb, o); err == nil {
			t.Errorf("New with %+v succeeded", o)
		}
	}
}

// With no server, the cache never subscribes: Get reads through (and
// fails with a wrapped error), WaitReady waits, Close ends it all.
func TestUnreachableReplica(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer rdb.Close()
	lost := make(chan error, 100)
	c, err := New(rdb, Options{MinRetryBackoff: time.Millisecond, MaxRetryBackoff: 10 * time.Millisecond,
		OnSubscriptionLost: func(err error) {
			select {
			case lost <- err:
			default:
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-lost:
		if err == nil {
			t.Fatal("OnSubscriptionLost with a nil error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no failed subscription reported")
	}
	if _, _, err := c.Get(context.Background(), "k"); err == nil || errors.Is(err, ErrClosed) {
		t.Fatalf("Get with no server: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := c.WaitReady(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitReady: %v", err)
	}
	if s := c.Stats(); s.Subscribed || s.Bypasses != 1 || s.Resets != 0 || s.Entries != 0 {
		t.Fatalf("stats %+v", s)
	}
	c.Close()
	c.Close()
	if _, _, err := c.Get(context.Background(), "k"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
	if err := c.WaitReady(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("WaitReady after Close: %v", err)
	}
}
