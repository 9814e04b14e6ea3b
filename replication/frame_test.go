package replication

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
)

func TestFrameRoundTripAndCorruption(t *testing.T) {
	var stream []byte
	stream = appendFrame(stream, frameBatch, []byte{0, 0, 0, 0, 0, 0, 0, 7}, []byte("batch bytes"))
	stream = appendFrame(stream, frameHeartbeat, []byte{0, 0, 0, 0, 0, 0, 0, 9})
	rd := bufio.NewReader(bytes.NewReader(stream))
	typ, p, err := readFrame(rd)
	if err != nil || typ != frameBatch || string(p[8:]) != "batch bytes" {
		t.Fatalf("first frame: %q %q %v", typ, p, err)
	}
	if typ, _, err = readFrame(rd); err != nil || typ != frameHeartbeat {
		t.Fatalf("second frame: %q %v", typ, err)
	}
	if _, _, err = readFrame(rd); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
	// Every single flipped bit is caught.
	for i := range stream {
		for bit := 0; bit < 8; bit++ {
			bad := append([]byte(nil), stream...)
			bad[i] ^= 1 << bit
			rd := bufio.NewReader(bytes.NewReader(bad))
			var err error
			for err == nil {
				_, _, err = readFrame(rd)
			}
			if err == io.EOF {
				t.Fatalf("flipping bit %d of byte %d went unnoticed", bit, i)
			}
		}
	}
}

// TestLargeFrame: a frame sent as its header and then its payload
// (appendFrameHeader) reads back as appendFrame's, and reading a large
// payload allocates little more than it.
func TestLargeFrame(t *testing.T) {
	off := []byte{0, 0, 0, 0, 0, 0, 0, 7}
	batch := bytes.Repeat([]byte("0123456789abcdef"), 2<<20) // 32 MB
	whole := appendFrame(nil, frameBatch, off, batch)
	split := append(append(appendFrameHeader(nil, frameBatch, off, batch), off...), batch...)
	if !bytes.Equal(whole, split) {
		t.Fatal("header-then-payload differs from appendFrame")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	typ, p, err := readFrame(bufio.NewReader(bytes.NewReader(split)))
	runtime.ReadMemStats(&after)
	if err != nil || typ != frameBatch || !bytes.Equal(p[8:], batch) {
		t.Fatalf("readFrame: %q, %d bytes, %v", typ, len(p), err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > uint64(len(split))*16/10 {
		t.Errorf("reading a frame of %d bytes allocated %d", len(split), d)
	}
}

// TestReadFrameEnd checks the errors of a stream that ends: io.EOF
// between frames, io.ErrUnexpectedEOF inside a header or a payload.
func TestReadFrameEnd(t *testing.T) {
	frame := appendFrame(nil, frameBatch, []byte("12345678"), []byte("batch bytes"))
	for cut := 0; cut < len(frame); cut++ {
		want := io.ErrUnexpectedEOF
		if cut == 0 {
			want = io.EOF
		}
		rd := bufio.NewReader(bytes.NewReader(frame[:cut]))
		if _, _, err := readFrame(rd); err != want {
			t.Fatalf("stream cut after %d bytes: %v, want %v", cut, err, want)
		}
	}
}

func FuzzReadFrame(f *testing.F) {
	f.Add(appendFrame(nil, frameBatch, []byte("12345678"), []byte("x")))
	f.Add(appendFrame(nil, frameDone, make([]byte, 12)))
	f.Add([]byte("B\xff\xff\xff\xff\x00\x00\x00\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := bufio.NewReader(bytes.NewReader(data))
		for i := 0; i < 100; i++ {
			_, p, err := readFrame(rd)
			if err != nil {
				if !errors.Is(err, ErrCorruptStream) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(p) > len(data) {
				t.Fatalf("payload longer than the input")
			}
		}
	})
}
