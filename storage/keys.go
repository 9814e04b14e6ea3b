package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Every Pebble key Cairn writes starts with one byte naming its keyspace.
// Pebble has no column families, so the prefix byte is what separates user
// metadata from subkeys, the expiry index and the server's own records.
const (
	// prefixMeta holds one record per user key: prefixMeta | ns | user key.
	prefixMeta byte = 'm'
	// prefixSubkey holds the members of collections, one record each:
	// prefixSubkey | ns | version (8 bytes, big endian) | member, the
	// version being the collection's random ID (Metadata.Version), so
	// that RENAME moves the metadata record alone (fieldKey).
	prefixSubkey byte = 's'
	// prefixValue held the values of strings longer than
	// Options.InlineValueMax in format 1 (prefixValue | ns | user key);
	// they are read, and replaced by chunks when written.
	prefixValue byte = 'w'
	// prefixChunk holds the values of strings longer than
	// Options.InlineValueMax in chunks (chunkKey).
	prefixChunk byte = 'c'
	// prefixExpire is the expiry index: prefixExpire | ns | expire-at (8 bytes,
	// big endian, milliseconds) | user key, with an empty value.
	prefixExpire byte = 'x'
	// prefixInternal holds the server's own records: format version,
	// replication offset, key counts and namespace tokens.
	prefixInternal byte = 'i'
)

// MaxNamespaceLen is the longest namespace name Cairn stores; the encoded
// key carries the length in one byte.
const MaxNamespaceLen = 255

// ErrNamespaceTooLong is returned when a namespace name exceeds
// MaxNamespaceLen bytes.
var ErrNamespaceTooLong = errors.New("namespace name longer than 255 bytes")

// Internal record names, stored under prefixInternal.
var (
	keyFormatVersion = []byte{prefixInternal, 'v'}
	keyReplOffset    = []byte{prefixInternal, 'o'}
	keyCountPrefix   = []byte{prefixInternal, 'c'}
	keyNamespacePfx  = []byte{prefixInternal, 'n'}
	keyLibraryPfx    = []byte{prefixInternal, 'f'}
)

// appendNS appends the length-prefixed namespace to dst.
func appendNS(dst []byte, ns string) []byte {
	dst = append(dst, byte(len(ns)))
	return append(dst, ns...)
}

// metaKey returns the metadata record key of user key k in namespace ns.
func metaKey(ns string, k []byte) []byte {
	return appendMetaKey(make([]byte, 0, 2+len(ns)+len(k)), ns, k)
}

// appendMetaKey appends the metadata record key of k in ns to dst.
func appendMetaKey(dst []byte, ns string, k []byte) []byte {
	dst = append(dst, prefixMeta)
	dst = appendNS(dst, ns)
	return append(dst, k...)
}

// MetaKey returns the encoded metadata key of key in ns, the form in which
// a WriteObserver reports written keys.
func MetaKey(ns string, key []byte) []byte { return metaKey(ns, key) }

// metaPrefix returns the prefix shared by every metadata key of ns.
func metaPrefix(ns string) []byte {
	return appendNS([]byte{prefixMeta}, ns)
}

// subkeyPrefix returns the prefix shared by every subkey of ns.
func subkeyPrefix(ns string) []byte {
	return appendNS([]byte{prefixSubkey}, ns)
}

// valueKey returns the key of the value record of string k in ns.
func valueKey(ns string, k []byte) []byte {
	b := make([]byte, 0, 2+len(ns)+len(k))
	b = append(b, prefixValue)
	b = appendNS(b, ns)
	return append(b, k...)
}

// valuePrefix returns the prefix shared by every value record of ns.
func valuePrefix(ns string) []byte {
	return appendNS([]byte{prefixValue}, ns)
}

// expireKey returns the expiry-index key of k in ns expiring at ms.
func expireKey(ns string, ms int64, k []byte) []byte {
	b := make([]byte, 0, 10+len(ns)+len(k))
	b = append(b, prefixExpire)
	b = appendNS(b, ns)
	b = binary.BigEndian.AppendUint64(b, uint64(ms))
	return append(b, k...)
}

// expirePrefix returns the prefix shared by every expiry-index key of ns.
func expirePrefix(ns string) []byte {
	return appendNS([]byte{prefixExpire}, ns)
}

// countKey returns the internal key holding the key count of ns.
func countKey(ns string) []byte {
	return appendNS(append([]byte(nil), keyCountPrefix...), ns)
}

// namespaceKey returns the internal key holding the token of namespace ns.
func namespaceKey(ns string) []byte {
	return append(append([]byte(nil), keyNamespacePfx...), ns...)
}

// libraryKey returns the internal key holding the code of function
// library name.
func libraryKey(name string) []byte {
	return append(append([]byte(nil), keyLibraryPfx...), name...)
}

// prefixEnd returns the smallest key greater than every key with prefix p,
// or nil when there is none.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// DecodeMetaKey splits a metadata record key into its namespace and user
// key. It reports an error when the key is not a well-formed metadata key;
// the returned slices alias k.
func DecodeMetaKey(k []byte) (ns, key []byte, err error) {
	if len(k) < 2 || k[0] != prefixMeta {
		return nil, nil, fmt.Errorf("storage: not a metadata key (%d bytes)", len(k))
	}
	n := int(k[1])
	if len(k) < 2+n {
		return nil, nil, fmt.Errorf("storage: metadata key namespace length %d exceeds key", n)
	}
	return k[2 : 2+n], k[2+n:], nil
}

// decodeExpireKey splits an expiry-index key of a known namespace prefix
// length into expire time and user key.
func decodeExpireKey(k []byte, prefixLen int) (ms int64, key []byte, ok bool) {
	if len(k) < prefixLen+8 {
		return 0, nil, false
	}
	return int64(binary.BigEndian.Uint64(k[prefixLen:])), k[prefixLen+8:], true
}

// IsMetaKey reports whether k is a metadata record key.
func IsMetaKey(k []byte) bool { return len(k) >= 2 && k[0] == prefixMeta }
