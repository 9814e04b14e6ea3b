package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// LogDataVersion is the version byte of the LogData encoding Cairn writes.
const LogDataVersion byte = 1

// logDataLen is the length of a version-1 LogData record: version, type,
// command code (2 bytes, big endian) and flags.
const logDataLen = 5

// Command is the code of the command that produced a batch, carried in its
// LogData. The numbering is part of the on-disk and replication format:
// append new codes, never renumber or reuse one.
type Command uint16

// Command codes.
const (
	CmdUnknown Command = iota
	CmdSet
	CmdSetNX
	CmdSetEX
	CmdPSetEX
	CmdMSet
	CmdMSetNX
	CmdGetSet
	CmdGetDel
	CmdGetEx
	CmdAppend
	CmdSetRange
	CmdIncr
	CmdIncrBy
	CmdIncrByFloat
	CmdDecr
	CmdDecrBy
	CmdDel
	CmdUnlink
	CmdExpire
	CmdPExpire
	CmdExpireAt
	CmdPExpireAt
	CmdPersist
	CmdRename
	CmdRenameNX
	CmdCopy
	CmdFlushDB
	CmdFlushAll
	CmdExpired // the primary reclaiming expired keys
	CmdNamespace
	CmdFormat // the format-version record written at creation
)

// Later commands' codes come after CmdPublish, which took 32.
const (
	CmdSetBit Command = iota + 33
	CmdBitOp
	CmdBitField
	CmdRestore
	CmdHSet
	CmdHSetNX
	CmdHMSet
	CmdHDel
	CmdHIncrBy
	CmdHIncrByFloat
	CmdSAdd
	CmdSRem
	CmdSPop
	CmdSMove
	CmdSInterStore
	CmdSUnionStore
	CmdSDiffStore
	CmdLPush
	CmdRPush
	CmdLPushX
	CmdRPushX
	CmdLPop
	CmdRPop
	CmdLInsert
	CmdLSet
	CmdLRem
	CmdLTrim
	CmdLMove
	CmdRPopLPush
	CmdLMPop
	CmdSort
	CmdZAdd
	CmdZIncrBy
	CmdZRem
	CmdZRemRangeByScore
	CmdZRemRangeByRank
	CmdZRemRangeByLex
	CmdZPopMin
	CmdZPopMax
	CmdZMPop
	CmdZUnionStore
	CmdZInterStore
	CmdZDiffStore
	CmdZRangeStore
	CmdGeoRadiusStore // GEORADIUS and GEORADIUSBYMEMBER with STORE or STOREDIST
	CmdGeoSearchStore
	CmdPFAdd
	CmdPFCount // the cardinality cache PFCOUNT writes back
	CmdPFMerge
	CmdPFDebug
	// CmdFunction marks a batch that changes the function libraries
	// (FUNCTION LOAD, DELETE, FLUSH and RESTORE): replicas reload theirs.
	CmdFunction
	CmdXAdd
	CmdXDel
	CmdXTrim
	CmdXSetID
	CmdXGroup // every XGROUP subcommand
	CmdXReadGroup
	CmdXAck
	CmdXClaim
	CmdXAutoClaim
)

// LogData flags.
const (
	// LogFlagNotify marks a batch whose command's event class was enabled in
	// the primary's notify-keyspace-events when it was written.
	LogFlagNotify byte = 1 << 0
	// LogFlagQuiet marks a context whose records change only how Redis
	// would hold a value in memory (its OBJECT ENCODING), not the data: the
	// write observer (WATCH, CLIENT TRACKING) does not hear of them, as
	// Redis's converting a value in place signals no modification.
	LogFlagQuiet byte = 1 << 1
)

// LogData is the typed command context that begins every batch Cairn
// commits. It consumes no sequence number and never reaches the memtable;
// replicas read it to learn which command produced the records after it.
type LogData struct {
	Type  Type
	Cmd   Command
	Flags byte
}

// ErrUnknownLogData is returned by DecodeLogData for a record of a version
// this build does not understand. Readers skip such records.
var ErrUnknownLogData = errors.New("storage: unknown LogData version")

// Encode returns the binary encoding of l.
func (l LogData) Encode() []byte {
	b := make([]byte, logDataLen)
	b[0] = LogDataVersion
	b[1] = byte(l.Type)
	binary.BigEndian.PutUint16(b[2:], uint16(l.Cmd))
	b[4] = l.Flags
	return b
}

// DecodeLogData decodes a LogData record. Bytes after the version-1 fields
// are ignored so later versions can extend the record; a record of another
// version yields ErrUnknownLogData and a short one a descriptive error.
// Neither should stop a reader from applying the batch.
func DecodeLogData(b []byte) (LogData, error) {
	if len(b) == 0 {
		return LogData{}, fmt.Errorf("storage: empty LogData record")
	}
	if b[0] != LogDataVersion {
		return LogData{}, fmt.Errorf("%w %d", ErrUnknownLogData, b[0])
	}
	if len(b) < logDataLen {
		return LogData{}, fmt.Errorf("storage: LogData record too short (%d bytes)", len(b))
	}
	return LogData{Type: Type(b[1]), Cmd: Command(binary.BigEndian.Uint16(b[2:])), Flags: b[4]}, nil
}

// CmdPublish marks a LogData-only batch that carries a PUBLISH to
// replicas: the channel and message follow the version-1 fields.
const CmdPublish Command = 32

// EncodePublish returns the LogData of a replicated PUBLISH.
func EncodePublish(channel, message []byte) []byte {
	b := LogData{Cmd: CmdPublish}.Encode()
	b = binary.BigEndian.AppendUint32(b, uint32(len(channel)))
	b = append(b, channel...)
	return append(b, message...)
}

// ErrNotPublish is returned by DecodePublish for a LogData record that is
// not a PUBLISH's. Replicas ask about every batch they apply, so the answer
// for an ordinary batch is this value, made once.
var ErrNotPublish = errors.New("storage: not a PUBLISH record")

// DecodePublish returns the channel and message of a replicated PUBLISH's
// LogData record. A record of another command (or one too short to hold
// a channel length) yields ErrNotPublish.
func DecodePublish(b []byte) (channel, message []byte, err error) {
	l, err := DecodeLogData(b)
	if err != nil {
		return nil, nil, err
	}
	if l.Cmd != CmdPublish || len(b) < logDataLen+4 {
		return nil, nil, ErrNotPublish
	}
	n := binary.BigEndian.Uint32(b[logDataLen:])
	rest := b[logDataLen+4:]
	if uint64(n) > uint64(len(rest)) {
		return nil, nil, fmt.Errorf("storage: PUBLISH record channel length %d exceeds record", n)
	}
	return rest[:n], rest[n:], nil
}
