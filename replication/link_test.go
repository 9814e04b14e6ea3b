package replication

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/pubsub"
	"github.com/cairnkv/cairn/pubsub/pubsubtest"
	"github.com/cairnkv/cairn/storage"
)

// TestReceiveFullSyncDoneMismatch checks that a done frame whose file count
// or offset disagrees with the full sync is refused before anything is
// installed, with a message that tells what the frame said from what the
// replica expected.
func TestReceiveFullSyncDoneMismatch(t *testing.T) {
	tests := []struct {
		name       string
		doneFiles  uint32 // the done frame's file count; one file is sent
		doneOffset uint64 // the done frame's offset; FULLRESYNC announced 7
		want       string
	}{
		{
			name:       "file count",
			doneFiles:  2,
			doneOffset: 7,
			want:       "replication: corrupt stream: full sync done frame says 2 files, offset 7; expected 1 files (received), offset 7 (from FULLRESYNC)",
		},
		{
			name:       "offset",
			doneFiles:  1,
			doneOffset: 9,
			want:       "replication: corrupt stream: full sync done frame says 1 files, offset 9; expected 1 files (received), offset 7 (from FULLRESYNC)",
		},
		{
			name:       "both",
			doneFiles:  0,
			doneOffset: 3,
			want:       "replication: corrupt stream: full sync done frame says 0 files, offset 3; expected 1 files (received), offset 7 (from FULLRESYNC)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stream []byte
			file := binary.BigEndian.AppendUint16(nil, uint16(len("MANIFEST")))
			file = append(file, "MANIFEST"...)
			file = binary.BigEndian.AppendUint64(file, 3)
			stream = appendFrame(stream, frameFile, file)
			stream = appendFrame(stream, frameChunk, []byte("abc"))
			done := binary.BigEndian.AppendUint32(nil, tt.doneFiles)
			done = binary.BigEndian.AppendUint64(done, tt.doneOffset)
			stream = appendFrame(stream, frameDone, done)

			dataDir := t.TempDir()
			n := &Node{opts: Options{DataDir: dataDir}, log: hclog.NewNullLogger()}
			lk := newLink(n, "127.0.0.1", 0)
			nc, peer := net.Pipe() // only its deadlines are used
			defer nc.Close()
			defer peer.Close()

			err := lk.receiveFullSync(nc, bufio.NewReader(bytes.NewReader(stream)), 7)
			if !errors.Is(err, ErrCorruptStream) {
				t.Fatalf("receiveFullSync = %v, want ErrCorruptStream", err)
			}
			if err.Error() != tt.want {
				t.Fatalf("receiveFullSync error:\n got %q\nwant %q", err, tt.want)
			}
			if staged, _ := filepath.Glob(filepath.Join(dataDir, "sync-in-*")); len(staged) != 0 {
				t.Fatalf("staging left behind: %v", staged)
			}
			if ents, err := os.ReadDir(dataDir); err != nil || len(ents) != 0 {
				t.Fatalf("data dir after a refused full sync: %v %v", ents, err)
			}
		})
	}
}

// TestApplyFramePublishes applies a stream of batches on a replica and
// checks what its subscribers receive: each batch's keyspace events, once
// and in order, and a replicated PUBLISH; a batch written without the
// notify bit publishes nothing.
func TestApplyFramePublishes(t *testing.T) {
	p, err := storage.Open(storage.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var frames [][]byte
	p.SetCommitHook(func(off uint64, repr []byte) {
		frames = append(frames, appendFrame(nil, frameBatch, binary.BigEndian.AppendUint64(nil, off), repr))
	})
	set := func(key string, flags byte, codes ...notify.Code) {
		b := p.NewBatch(storage.LogData{Type: storage.TypeString, Cmd: storage.CmdSet, Flags: flags})
		if len(codes) > 0 {
			b.LogData(notify.EncodeRecordEvents(codes))
		}
		b.PutMeta("", []byte(key), nil, storage.Metadata{Type: storage.TypeString, Value: []byte("v")})
		if _, err := p.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	set("a", storage.LogFlagNotify, notify.CodeSet)
	if _, err := p.Commit(p.NewRawBatch(storage.EncodePublish([]byte("news"), []byte("hi")))); err != nil {
		t.Fatal(err)
	}
	set("bb", storage.LogFlagNotify, notify.CodeNew, notify.CodeSet)
	set("quiet", 0)
	set("c", storage.LogFlagNotify, notify.CodeSet)

	store, err := storage.Open(storage.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	hub := pubsub.NewHub()
	emitter := notify.NewEmitter(hub)
	flags, _ := notify.ParseFlags("KEAn")
	emitter.SetFlags(flags)
	rec := &recorder{}
	hub.Subscribe(rec, pubsub.KindPattern, []byte("__keyevent@0__:*"))
	hub.Subscribe(rec, pubsub.KindChannel, []byte("news"))
	n := &Node{opts: Options{Store: store, Notify: emitter}, log: hclog.NewNullLogger()}
	lk := newLink(n, "127.0.0.1", 0)
	for i, f := range frames {
		typ, payload, err := readFrame(bufio.NewReader(bytes.NewReader(f)))
		if err != nil || typ != frameBatch {
			t.Fatalf("frame %d: %q %v", i, typ, err)
		}
		if off, err := lk.applyFrame(payload); err != nil || off != uint64(i+1) {
			t.Fatalf("frame %d: offset %d, %v", i, off, err)
		}
	}
	want := []string{
		"pmessage __keyevent@0__:* __keyevent@0__:set a",
		"message news hi",
		"pmessage __keyevent@0__:* __keyevent@0__:new bb",
		"pmessage __keyevent@0__:* __keyevent@0__:set bb",
		"pmessage __keyevent@0__:* __keyevent@0__:set c",
	}
	if got := strings.Join(rec.msgs, "|"); got != strings.Join(want, "|") {
		t.Fatalf("published %q\nwant %q", rec.msgs, want)
	}
}

// recorder is a subscriber that keeps each message's RESP2 frame as its
// bulk strings, separated by spaces.
type recorder struct{ msgs []string }

func (r *recorder) Deliver(m *pubsub.Message) {
	var parts []string
	for _, line := range strings.Split(string(m.Frame(2)), "\r\n") {
		if line != "" && line[0] != '*' && line[0] != '$' {
			parts = append(parts, line)
		}
	}
	r.msgs = append(r.msgs, strings.Join(parts, " "))
}

// setStream commits n SETs on a primary, as the SET command writes them
// with "set" events enabled (a LogData context with the notify bit, the
// events record, the metadata record), over 1,000 keys, and returns the
// batch frames a feeder sends for them.
func setStream(tb testing.TB, n int) []byte {
	tb.Helper()
	p, err := storage.Open(storage.Options{Dir: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	defer p.Close()
	var stream []byte
	p.SetCommitHook(func(off uint64, repr []byte) {
		stream = appendFrame(stream, frameBatch, binary.BigEndian.AppendUint64(nil, off), repr)
	})
	val := []byte("0123456789abcdef")
	for i := range n {
		key := fmt.Appendf(nil, "key:%d", i%1000)
		old, found, err := p.GetMeta("", key)
		if err != nil {
			tb.Fatal(err)
		}
		var op *storage.Metadata
		if found {
			op = &old
		}
		b := p.NewBatch(storage.LogData{Type: storage.TypeString, Cmd: storage.CmdSet, Flags: storage.LogFlagNotify})
		b.LogData(notify.EncodeRecordEvents([]notify.Code{notify.CodeSet}))
		b.PutMeta("", key, op, storage.Metadata{Type: storage.TypeString, Value: val})
		if _, err := p.Commit(b); err != nil {
			tb.Fatal(err)
		}
	}
	return stream
}

// BenchmarkReplicaApplySet measures what a replica does for one replicated
// SET: read its batch frame, apply the batch (with the replication log as
// the commit hook, as the server installs it) and publish its "set" event
// to one PSUBSCRIBE __keyevent@0__:* subscriber, with
// notify-keyspace-events KEA.
func BenchmarkReplicaApplySet(b *testing.B) {
	stream := setStream(b, b.N)
	dir := b.TempDir()
	store, err := storage.Open(storage.Options{Dir: filepath.Join(dir, "db"), RowCacheBytes: 32 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	replLog, err := OpenLog(LogOptions{Dir: filepath.Join(dir, "log")})
	if err != nil {
		b.Fatal(err)
	}
	defer replLog.Close()
	var hookErr error
	store.SetCommitHook(func(off uint64, repr []byte) {
		if err := replLog.Append(off, repr); err != nil && hookErr == nil {
			hookErr = err
		}
	})
	hub := pubsub.NewHub()
	emitter := notify.NewEmitter(hub)
	flags, err := notify.ParseFlags("KEA")
	if err != nil {
		b.Fatal(err)
	}
	emitter.SetFlags(flags)
	sink := &pubsubtest.FrameSink{}
	hub.Subscribe(sink, pubsub.KindPattern, []byte("__keyevent@0__:*"))
	n := &Node{opts: Options{Store: store, Log: replLog, Notify: emitter}, log: hclog.NewNullLogger()}
	lk := newLink(n, "127.0.0.1", 0)
	rd := bufio.NewReaderSize(bytes.NewReader(stream), 1<<20)

	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		typ, p, err := readFrame(rd)
		if err != nil || typ != frameBatch {
			b.Fatalf("frame %q: %v", typ, err)
		}
		if _, err := lk.applyFrame(p); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if hookErr != nil {
		b.Fatal(hookErr)
	}
	if sink.N != b.N || string(sink.Last) == "" {
		b.Fatalf("%d messages for %d batches; last %q", sink.N, b.N, sink.Last)
	}
}
