package replication

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
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
