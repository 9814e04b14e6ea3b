package cache_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cairnkv/cairn/examples/cache"
	"github.com/redis/go-redis/v9"
)

// A cache in front of a replica on 127.0.0.1:6667 (started with
// --notify-keyspace-events KEA, as is its primary).
func Example() {
	replica := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6667"})
	defer replica.Close()
	c, err := cache.New(replica, cache.Options{MaxEntries: 100_000})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	value, found, err := c.Get(context.Background(), "user:42")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(value, found)
}
