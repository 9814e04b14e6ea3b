package rdb

import (
	"encoding/binary"
	"errors"
)

// Opcodes of function libraries in an RDB: Redis 7.0 writes
// opcodeFunction2, one per library, followed by the library's code as an
// RDB string; opcodeFunction is the format of its release candidates.
const (
	opcodeFunction2 = 245
	opcodeFunction  = 246
)

// FunctionError is an error of DecodeFunctions whose text is Redis's
// FUNCTION RESTORE error without its ERR code.
type FunctionError string

func (e FunctionError) Error() string { return string(e) }

// EncodeFunctions returns the FUNCTION DUMP payload of libraries' codes:
// each as opcode 245 and an RDB string, then the RDB version and the
// checksum, as Redis 7.0 writes it (codes LZF-compressed where Redis's
// rdbcompression would compress them).
func EncodeFunctions(codes [][]byte) []byte {
	n := 10
	for _, c := range codes {
		n += len(c) + 10
	}
	out := make([]byte, 0, n)
	for _, c := range codes {
		out = append(out, opcodeFunction2)
		out = appendCompressedString(out, c)
	}
	return appendFooter(out)
}

// DecodeFunctions returns the libraries' codes a FUNCTION DUMP payload
// holds. A payload whose footer is wrong is ErrChecksum; one whose body
// cannot be read is a FunctionError with Redis's text. maxLen bounds
// the length of an LZF-compressed code.
func DecodeFunctions(payload []byte, maxLen int64) ([][]byte, error) {
	if len(payload) < 10 {
		return nil, ErrChecksum
	}
	footer := payload[len(payload)-10:]
	if binary.LittleEndian.Uint16(footer) > Version ||
		checksum(payload[:len(payload)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return nil, ErrChecksum
	}
	r := reader{b: payload[:len(payload)-10]}
	var codes [][]byte
	for len(r.b) > 0 {
		typ, _ := r.take(1)
		switch typ[0] {
		case opcodeFunction2:
		case opcodeFunction:
			return nil, FunctionError("Pre-GA function format not supported")
		default:
			return nil, FunctionError("given type is not a function")
		}
		code, err := r.str(maxLen)
		if err != nil {
			return nil, FunctionError("Failed loading library payload")
		}
		codes = append(codes, code)
	}
	return codes, nil
}

// IsFunctionError reports whether err is a FunctionError.
func IsFunctionError(err error) bool {
	var fe FunctionError
	return errors.As(err, &fe)
}
