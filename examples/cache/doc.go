// Package cache is an example of an in-process read cache in front of a
// Cairn replica, invalidated by the keyspace notifications that replica
// publishes.
//
// A Cache answers Get from memory when it can and otherwise sends GET (and
// PTTL) to the replica and keeps the reply. In the background it holds one
// PSUBSCRIBE __keyevent@0__:* connection to the same replica; every message
// on it names a key that changed, and the cache drops that key's entry.
// Cairn replicas publish the events of replicated writes after applying
// them, so a GET sent after an event arrived sees the write or a newer one.
//
// # Guarantees
//
// Once the cache has processed the invalidation of a write (the event
// arrived and, if set, Options.OnInvalidate was called), no Get that starts
// afterwards returns a value that write replaced, whether from memory or
// from the replica, as long as the replica keeps following the same
// primary. Two mechanisms make this hold:
//
//   - A fill races invalidations: a GET may be answered with the old value
//     just before the write is applied, while its event arrives before the
//     reply. Each key with a GET in flight has an invalidation counter, and
//     the cache keeps a reset epoch; a reply is stored only if neither moved
//     between sending the GET and receiving its reply.
//   - The cache serves from memory only while its subscription is confirmed.
//     When the subscription connection fails, is closed by the server (for
//     example by CLIENT KILL, or by a replica after a full sync, whose
//     changes no event describes) or stops answering pings, the cache drops
//     every entry and resubscribes. Until the new PSUBSCRIBE is confirmed,
//     Get reads through to the replica and stores nothing. Between the
//     moment a connection breaks and the moment the cache notices (at once
//     for a closed connection, within two PingIntervals for a silent one),
//     entries whose events were lost are still served.
//
// Entries also honour the key's TTL, read with PTTL together with the value:
// the "expired" event comes only when the primary reclaims the key, possibly
// a while after the replica started to hide it.
//
// # What is not guaranteed
//
// Notifications are best effort: Pub/Sub messages are neither persisted nor
// acknowledged. A message published while the subscription is down is lost,
// which is why the cache resets on every disconnect; but a loss that does
// not break the connection (for instance a replica that crashes between
// applying a batch and publishing its events, then comes back before the
// cache notices) leaves a stale entry until the next event for that key, a
// reset, or Options.MaxAge. Set MaxAge to bound staleness in that case.
//
// FLUSHDB and FLUSHALL publish no event, as in Redis: an application that
// flushes must call Reset on its caches. The replica's
// notify-keyspace-events must enable the generic, string and expired
// classes and the E channel family (KEA or Eg$x), and so must the primary's,
// since a primary only ships the events its own flags enable.
//
// The cache reads what the replica has: a replica that lags behind its
// primary serves, and the cache caches, older values. Nothing is promised
// across keys.
//
// # Events
//
// Every event invalidates the key in its payload, whatever its name, with
// one exception: keymiss (the m flag) is a read event, published when a
// read finds no key; it changes nothing, and the cache's own GETs of missing
// keys would otherwise discard their own fills. RENAME publishes rename_from
// with the old name and rename_to with the new one, so both go.
package cache
