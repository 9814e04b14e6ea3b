package rdb

// LZF compression as Redis's RDB writer applies it (liblzf 3.6 built with
// its defaults: a hash table of 2^16 slots, the "very fast" mode that
// hashes only the last two positions of each match): the same input gives
// the same bytes, so a payload Cairn writes is the one Redis writes.

const (
	lzfHashLog = 16
	lzfMaxLit  = 1 << 5
	lzfMaxOff  = 1 << 13
	lzfMaxRef  = 1<<8 + 1<<3
)

// lzfHash is liblzf's slot of the three bytes whose running value is h.
func lzfHash(h uint32) uint32 {
	return ((h^h<<5)>>(3*8-lzfHashLog) - h*5) & (1<<lzfHashLog - 1)
}

// lzfCompress compresses in into at most outLen bytes and returns them,
// or nil when they would not fit (or in is empty), as lzf_compress does.
func lzfCompress(in []byte, outLen int) []byte {
	n := len(in)
	if n == 0 || outLen == 0 {
		return nil
	}
	// Slots hold a position plus one; zero is empty (liblzf's table is
	// never initialized, and a fresh one reads as empty).
	var table [1 << lzfHashLog]int32
	out := make([]byte, 1, outLen+1) // out[0] is the first run's header
	lit := 0
	ip := 0
	// literal copies in[ip] into the current literal run, closing the run
	// (its header byte) when it is full and starting the next.
	literal := func() {
		out = append(out, in[ip])
		ip++
		lit++
		if lit == lzfMaxLit {
			out[len(out)-lit-1] = byte(lit - 1)
			lit = 0
			out = append(out, 0)
		}
	}
	hval := uint32(in[0])<<8 | uint32(in[1%n])
	for ip < n-2 {
		hval = hval<<8 | uint32(in[ip+2])
		slot := lzfHash(hval)
		ref := int(table[slot]) - 1
		table[slot] = int32(ip + 1)
		if ref > 0 && ip-ref-1 < lzfMaxOff && ref < ip &&
			in[ref+2] == in[ip+2] && in[ref] == in[ip] && in[ref+1] == in[ip+1] {
			off := ip - ref - 1
			length := 2
			maxLen := n - ip - length
			if maxLen > lzfMaxRef {
				maxLen = lzfMaxRef
			}
			op := len(out)
			if op+3+1 >= outLen {
				back := 0
				if lit == 0 {
					back = 1
				}
				if op-back+3+1 >= outLen {
					return nil
				}
			}
			out[op-lit-1] = byte(lit - 1) // end the literal run
			if lit == 0 {
				out = out[:op-1]
			}
			matched := false
			if maxLen > 16 {
				for k := 0; k < 16; k++ {
					length++
					if in[ref+length] != in[ip+length] {
						matched = true
						break
					}
				}
			}
			if !matched {
				for {
					length++
					if !(length < maxLen && in[ref+length] == in[ip+length]) {
						break
					}
				}
			}
			length -= 2
			ip++
			if length < 7 {
				out = append(out, byte(off>>8+length<<5))
			} else {
				out = append(out, byte(off>>8+7<<5), byte(length-7))
			}
			out = append(out, byte(off), 0) // and the next run's header
			lit = 0
			ip += length + 1
			if ip >= n-2 {
				break
			}
			ip -= 2
			hval = uint32(in[ip])<<8 | uint32(in[ip+1])
			hval = hval<<8 | uint32(in[ip+2])
			table[lzfHash(hval)] = int32(ip + 1)
			ip++
			hval = hval<<8 | uint32(in[ip+2])
			table[lzfHash(hval)] = int32(ip + 1)
			ip++
			continue
		}
		if len(out) >= outLen {
			return nil
		}
		literal()
	}
	if len(out)+3 > outLen {
		return nil
	}
	for ip < n {
		literal()
	}
	out[len(out)-lit-1] = byte(lit - 1)
	if lit == 0 {
		out = out[:len(out)-1]
	}
	return out
}

// appendCompressedString appends s as Redis's RDB writer does with
// rdbcompression on: LZF-compressed when it is longer than 20 bytes and
// compresses into at most four bytes fewer, plain otherwise.
func appendCompressedString(out, s []byte) []byte {
	if len(s) > 20 {
		if c := lzfCompress(s, len(s)-4); c != nil {
			out = append(out, 0xc3)
			out = appendLen(out, uint64(len(c)))
			out = appendLen(out, uint64(len(s)))
			return append(out, c...)
		}
	}
	out = appendLen(out, uint64(len(s)))
	return append(out, s...)
}
