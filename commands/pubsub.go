package commands

import (
	"bytes"
	"fmt"

	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/pubsub"
	"github.com/cairnkv/cairn/storage"
)

func init() {
	ps := func(name string, arity int, flags Flag, since, summary string, h Handler) *Spec {
		return &Spec{Name: name, Arity: arity, Flags: flags, Group: "pubsub", Since: since, Summary: summary, Handler: h}
	}
	// Shard channels name their keys, as in Redis, where a channel's
	// hash slot is its key's (Cairn only reports the positions). Their
	// key spec marks them as not keys: last is the last channel's index,
	// or counted from the end when negative, and the spec's is relative to
	// the first channel.
	sharded := func(s *Spec, last int) *Spec {
		s.FirstKey, s.LastKey, s.Step = 1, last, 1
		rel := last
		if last > 0 {
			rel = last - 1
		}
		s.KeySpecs = []KeySpec{KeyRange(1, rel, 1, KeyNotKey)}
		return s
	}
	const subFlags = FlagPubSub | FlagNoScript | FlagLoading | FlagStale
	register(
		ps("subscribe", -2, subFlags, "2.0.0", "Listens for messages published to channels.", cmdSubscribe),
		ps("unsubscribe", -1, subFlags, "2.0.0", "Stops listening to messages posted to channels.", cmdUnsubscribe),
		ps("psubscribe", -2, subFlags, "2.0.0", "Listens for messages published to channels that match one or more patterns.", cmdPSubscribe),
		ps("punsubscribe", -1, subFlags, "2.0.0", "Stops listening to messages published to channels that match one or more patterns.", cmdPUnsubscribe),
		sharded(ps("ssubscribe", -2, subFlags, "7.0.0", "Listens for messages published to shard channels.", cmdSSubscribe), -1),
		sharded(ps("sunsubscribe", -1, subFlags, "7.0.0", "Stops listening to messages posted to shard channels.", cmdSUnsubscribe), -1),
		ps("publish", 3, FlagPubSub|FlagLoading|FlagStale|FlagFast|FlagMayReplicate, "2.0.0", "Posts a message to a channel.", cmdPublish),
		sharded(ps("spublish", 3, FlagPubSub|FlagLoading|FlagStale|FlagFast|FlagMayReplicate, "7.0.0", "Post a message to a shard channel", cmdSPublish), 1),
		&Spec{Name: "pubsub", Arity: -2, Group: "pubsub", Since: "2.8.0", Summary: "A container for Pub/Sub commands.",
			Subcommands: map[string]*Spec{
				"channels":      {Arity: -2, Flags: FlagPubSub | FlagLoading | FlagStale, Since: "2.8.0", Summary: "Returns the active channels.", Handler: cmdPubSubChannels},
				"numsub":        {Arity: -2, Flags: FlagPubSub | FlagLoading | FlagStale, Since: "2.8.0", Summary: "Returns a count of subscribers to channels.", Handler: cmdPubSubNumSub},
				"numpat":        {Arity: 2, Flags: FlagPubSub | FlagLoading | FlagStale, Since: "2.8.0", Summary: "Returns a count of unique pattern subscriptions.", Handler: cmdPubSubNumPat},
				"shardchannels": {Arity: -2, Flags: FlagPubSub | FlagLoading | FlagStale, Since: "7.0.0", Summary: "Returns the active shard channels.", Handler: cmdPubSubShardChannels},
				"shardnumsub":   {Arity: -2, Flags: FlagPubSub | FlagLoading | FlagStale, Since: "7.0.0", Summary: "Returns the count of subscribers of shard channels.", Handler: cmdPubSubShardNumSub},
				"help":          {Arity: 2, Flags: FlagLoading | FlagStale, Since: "6.2.0", Summary: "Returns helpful text about the different subcommands.", Handler: cmdPubSubHelp},
			}},
	)
}

// subscribedModeAllowed lists the commands a RESP2 connection may run
// while it holds subscriptions.
var subscribedModeAllowed = map[string]bool{
	"subscribe": true, "unsubscribe": true, "psubscribe": true, "punsubscribe": true,
	"ssubscribe": true, "sunsubscribe": true, "ping": true, "quit": true, "reset": true,
}

// subscribedModeError is Redis's refusal of other commands in RESP2
// subscribed mode.
func subscribedModeError(name string) string {
	return fmt.Sprintf("ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context", name)
}

// kindNames are the reply names of each subscription kind.
var kindNames = [3][2]string{
	pubsub.KindChannel: {"subscribe", "unsubscribe"},
	pubsub.KindPattern: {"psubscribe", "punsubscribe"},
	pubsub.KindShard:   {"ssubscribe", "sunsubscribe"},
}

func cmdSubscribe(c *Ctx)    { subscribe(c, pubsub.KindChannel) }
func cmdPSubscribe(c *Ctx)   { subscribe(c, pubsub.KindPattern) }
func cmdSSubscribe(c *Ctx)   { subscribe(c, pubsub.KindShard) }
func cmdUnsubscribe(c *Ctx)  { unsubscribe(c, pubsub.KindChannel) }
func cmdPUnsubscribe(c *Ctx) { unsubscribe(c, pubsub.KindPattern) }
func cmdSUnsubscribe(c *Ctx) { unsubscribe(c, pubsub.KindShard) }

// subscribe replies once per name with the subscription count after it.
func subscribe(c *Ctx, k pubsub.Kind) {
	if c.Client.StartQueuedOutput != nil {
		c.Client.startQueuedOutput()
	}
	for _, name := range c.Args[1:] {
		n := c.Env.PubSub.Subscribe(c.Client.Subscriber, k, name)
		c.subscriptionReply(kindNames[k][0], name, n)
	}
	c.Client.syncSubscriptions(c.Env.PubSub)
}

// unsubscribe replies once per name (every held name when none is given;
// a null name when nothing is held).
func unsubscribe(c *Ctx, k pubsub.Kind) {
	hub := c.Env.PubSub
	names := c.Args[1:]
	if len(names) == 0 {
		for _, n := range hub.Names(c.Client.Subscriber, k) {
			names = append(names, []byte(n))
		}
		if len(names) == 0 {
			ch, p, sh := hub.Counts(c.Client.Subscriber)
			count := ch + p
			if k == pubsub.KindShard {
				count = sh
			}
			c.subscriptionReply(kindNames[k][1], nil, count)
			return
		}
	}
	for _, name := range names {
		n := hub.Unsubscribe(c.Client.Subscriber, k, name)
		c.subscriptionReply(kindNames[k][1], name, n)
	}
	c.Client.syncSubscriptions(hub)
}

// subscriptionReply writes a (un)subscribe confirmation: a push frame in
// RESP3, an array in RESP2; a nil name is written as a null.
func (c *Ctx) subscriptionReply(kind string, name []byte, count int) {
	c.W.Push(3)
	c.W.BulkString(kind)
	if name == nil {
		c.W.NullBulk()
	} else {
		c.W.Bulk(name)
	}
	c.W.Int(int64(count))
}

// syncSubscriptions records how many subscriptions the client holds, for
// the RESP2 subscribed-mode check.
func (c *Client) syncSubscriptions(h *pubsub.Hub) {
	ch, p, sh := h.Counts(c.Subscriber)
	c.setSubscriptions(ch + p + sh)
}

// cmdPublish delivers to this node's subscribers and, on a primary with
// replicas (or one that had a replica within the last hour, which may
// resume: replication.Node.LogsPublish), commits a LogData-only entry so
// every replica publishes it too (in order with the writes around it).
func cmdPublish(c *Ctx) {
	if c.txn != nil {
		publishInTxn(c, false)
		return
	}
	if c.logsPublish() {
		b := c.Env.Store.NewRawBatch(storage.EncodePublish(c.Args[1], c.Args[2]))
		if !c.commit(b) {
			return
		}
	}
	c.W.Int(int64(c.Env.PubSub.Publish(c.Args[1], c.Args[2])))
}

// logsPublish reports whether a PUBLISH goes to the replication log: on a
// primary that has, or lately had, a replica (replication.Node.LogsPublish).
func (c *Ctx) logsPublish() bool {
	return c.Env.Repl != nil && !c.Env.Repl.IsReplica() && c.Env.Repl.LogsPublish()
}

func cmdSPublish(c *Ctx) {
	if c.txn != nil {
		publishInTxn(c, true)
		return
	}
	c.W.Int(int64(c.Env.PubSub.PublishShard(c.Args[1], c.Args[2])))
}

// publishInTxn is PUBLISH (SPUBLISH with shard) in a transaction or a
// script: the message goes out with the transaction's events once its
// batch commits, in order with them, as Redis delivers it between the
// events of the commands before and after it; replicas get it in the
// batch, at its place. The reply counts the receivers at the call. A
// script abandoned to run again under every lock has sent nothing.
func publishInTxn(c *Ctx, shard bool) {
	ch, msg := bytes.Clone(c.Args[1]), bytes.Clone(c.Args[2])
	var n int
	if shard {
		n = c.Env.PubSub.ShardReceivers(ch)
	} else {
		n = c.Env.PubSub.Receivers(ch)
		if c.logsPublish() {
			c.txn.b.Publish(ch, msg)
			c.txn.publishes++
		}
	}
	c.txn.events = append(c.txn.events, notify.Message(ch, msg, shard))
	c.W.Int(int64(n))
}

func channelsReply(c *Ctx, k pubsub.Kind) {
	if len(c.Args) > 3 {
		c.errorf("ERR unknown subcommand or wrong number of arguments for '%s'. Try PUBSUB HELP.", truncate(c.Args[1], 128))
		return
	}
	var pattern []byte
	if len(c.Args) > 2 {
		pattern = c.Args[2]
	}
	names := c.Env.PubSub.Channels(k, pattern)
	c.W.Array(len(names))
	for _, n := range names {
		c.W.BulkString(n)
	}
}

// numSubReply writes channel, count pairs: a flat array in RESP2 and RESP3
// alike, as Redis 7.0 does.
func numSubReply(c *Ctx, k pubsub.Kind) {
	c.W.Array(2 * (len(c.Args) - 2))
	for _, ch := range c.Args[2:] {
		c.W.Bulk(ch)
		c.W.Int(int64(c.Env.PubSub.NumSub(k, ch)))
	}
}

func cmdPubSubChannels(c *Ctx)      { channelsReply(c, pubsub.KindChannel) }
func cmdPubSubShardChannels(c *Ctx) { channelsReply(c, pubsub.KindShard) }
func cmdPubSubNumSub(c *Ctx)        { numSubReply(c, pubsub.KindChannel) }
func cmdPubSubShardNumSub(c *Ctx)   { numSubReply(c, pubsub.KindShard) }
func cmdPubSubNumPat(c *Ctx)        { c.W.Int(int64(c.Env.PubSub.Stats().Patterns)) }

func cmdPubSubHelp(c *Ctx) {
	help(c, "PUBSUB", []string{
		"CHANNELS [<pattern>]", "    Return the currently active channels matching a <pattern> (default: '*').",
		"NUMPAT", "    Return number of subscriptions to patterns.",
		"NUMSUB [<channel> ...]", "    Return the number of subscribers for the specified channels, excluding",
		"    pattern subscriptions(default: no channels).",
		"SHARDCHANNELS [<pattern>]", "    Return the currently active shard level channels matching a <pattern> (default: '*').",
		"SHARDNUMSUB [<shardchannel> ...]", "    Return the number of subscribers for the specified shard level channel(s)",
	})
}
