package server

import (
	"bytes"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/cairnkv/cairn/commands"
	"github.com/cairnkv/cairn/config"
	"github.com/cairnkv/cairn/pubsub"
	"github.com/cairnkv/cairn/storage"
)

// newTestServer returns a server over a real Pebble store in a temp dir;
// connections are fed by hand, nothing listens.
func newTestServer(t testing.TB) *Server {
	t.Helper()
	dir, err := os.MkdirTemp("", "cairn-fuzz-")
	if err != nil {
		t.Fatal(err)
	}
	store, err := storage.Open(storage.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		store.Close()
		os.RemoveAll(dir)
	})
	cfg := config.New()
	// Keep the fuzzer's strings small so it explores, not allocates.
	if err := cfg.Set([]config.Pair{{Name: "proto-max-bulk-len", Value: "1mb"}}); err != nil {
		t.Fatal(err)
	}
	env := &commands.Env{Store: store, Config: cfg, PubSub: pubsub.NewHub(), Log: nullLogger(), Clients: commands.NewClientRegistry(),
		Stats: &commands.Stats{}, Started: time.Now(), Version: "test"}
	// CLIENT PAUSE holds nothing back here: a paused request would wait
	// for the pause to end, not for the fuzzer's client to leave.
	env.StopClientPause()
	store.SetWriteObserver(env.Clients) // WATCH and CLIENT TRACKING, as cmd/cairn wires them
	return New(env)
}

// exchange runs one connection over net.Pipe: it sends input and a marker
// request, waits for the marker's reply (or for the server to close the
// connection), closes the client side and returns everything the server
// wrote. A server that does not finish once the client is gone fails.
func (s *Server) exchange(t testing.TB, input []byte) []byte {
	client, srv := net.Pipe()
	c := newConn(s, srv)
	s.conns.Add(1)
	done := make(chan struct{})
	go func() {
		c.serve()
		close(done)
	}()
	var mu sync.Mutex
	var out bytes.Buffer
	read := make(chan struct{})
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := client.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				close(read)
				return
			}
		}
	}()
	client.SetWriteDeadline(time.Now().Add(5 * time.Second))
	client.Write(input)
	client.Write([]byte(marker))
	// An input that leaves a request unfinished swallows the marker; give
	// up waiting for it after a while.
	deadline := time.Now().Add(100 * time.Millisecond)
	for time.Now().Before(deadline) {
		mu.Lock()
		got := bytes.HasSuffix(out.Bytes(), []byte(markerReply))
		mu.Unlock()
		if got {
			break
		}
		select {
		case <-done:
			deadline = time.Now()
		case <-time.After(time.Millisecond):
		}
	}
	client.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("connection did not finish after the client left, for input %q", input)
	}
	<-read
	mu.Lock()
	defer mu.Unlock()
	return append([]byte(nil), out.Bytes()...)
}

const (
	marker      = "*2\r\n$4\r\nECHO\r\n$6\r\nMARKER\r\n"
	markerReply = "$6\r\nMARKER\r\n"
)

// FuzzConnection drives random bytes and random command sequences through
// the request reader, the dispatcher and every command handler, over real
// storage. It checks that nothing panics or hangs and that a connection
// either answers the marker that follows the input or ends with a
// protocol error.
func FuzzConnection(f *testing.F) {
	seeds := []string{
		"PING\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
		"SET k 10\r\nINCRBY k 9223372036854775807\r\nINCRBYFLOAT k 1e400\r\n",
		"SET k v EX 0\r\nSET k v PX 9223372036854775807\r\nEXPIRE k -9223372036854775808\r\n",
		"SETRANGE k 1048570 abcdefghijk\r\nGETRANGE k -1 -100\r\nAPPEND k x\r\n",
		"MSET a 1 b\r\nMSETNX a 1 b 2\r\nRENAME a b\r\nCOPY b c REPLACE\r\n",
		"SCAN 18446744073709551615 COUNT 0\r\nSCAN -1 MATCH [a-\r\nKEYS *\\\r\n",
		"HELLO 3\r\nCONFIG GET *\r\nCLIENT LIST\r\nCOMMAND DOCS get\r\nINFO\r\n",
		"*-1\r\n*0\r\n*1\r\n$-1\r\n",
		"*1\r\n$2147483648\r\n",
		"\"unbalanced\r\n",
		"CONFIG SET hz 0 maxclients -1\r\nNAMESPACE ADD a b\r\nAUTH x y z\r\n",
		"FLUSHDB ASYNC\r\nDBSIZE\r\nRANDOMKEY\r\nTYPE k\r\n",
		"WATCH k\r\nMULTI\r\nSET k 1\r\nINCR k\r\nMULTI\r\nGET\r\nEXEC\r\nEXEC\r\nDISCARD\r\n",
		"MULTI\r\nSET a 1 PXAT 1\r\nCOPY a b\r\nFLUSHDB\r\nDBSIZE\r\nSET c 1\r\nEXEC\r\nUNWATCH\r\n",
		"SET a 1\r\nINCR a\r\nGET a\r\nAPPEND b x\r\nRENAME b c\r\nDEL a c\r\nPING\r\nSET d 1\r\nSET d 2\r\n",
		"SETBIT k 7 1\r\nBITFIELD k SET i8 #1 -5 INCRBY u4 0 99 OVERFLOW FAIL INCRBY i64 3 -1 GET u63 2\r\nBITOP NOT d k\r\n",
		"BITCOUNT k -5 -1 BIT\r\nBITPOS k 0 1 -1 BIT\r\nGETBIT k 4294967295\r\nLCS k d IDX WITHMATCHLEN MINMATCHLEN 1\r\n",
		"DUMP k\r\nRESTORE r 0 x\r\nRESTORE r 0 \"\\x00\\x05hello\\n\\x00cr\\xdfve4 \\n\" REPLACE ABSTTL\r\n",
		"CLIENT REPLY SKIP\r\nPING\r\nCLIENT REPLY OFF\r\nGET k\r\nCLIENT REPLY ON\r\nCLIENT PAUSE 100 WRITE\r\nSET a 1\r\nCLIENT UNPAUSE\r\n",
		"HELLO 3\r\nCLIENT TRACKING on NOLOOP\r\nGET k\r\nSET k 1\r\nMGET a b\r\nCLIENT TRACKING on BCAST\r\nCLIENT TRACKING off\r\n" +
			"CLIENT TRACKING on BCAST PREFIX a PREFIX b\r\nMSET a1 1 b1 2\r\nFLUSHDB\r\nCLIENT TRACKINGINFO\r\nRESET\r\nGET k\r\n",
		"CLIENT TRACKING on OPTIN REDIRECT 1\r\nCLIENT CACHING yes\r\nGET k\r\nSET k 2\r\nCONFIG SET tracking-table-max-keys 1\r\n" +
			"CLIENT TRACKING on OPTIN\r\nCLIENT CACHING yes\r\nMULTI\r\nMGET a b c\r\nEXEC\r\nCLIENT GETREDIR\r\nCLIENT TRACKING on PREFIX x\r\n",
		"SET a 5\r\nOBJECT ENCODING a\r\nCOPY a b\r\nOBJECT REFCOUNT b\r\nSETBIT a 0 0\r\nMULTI\r\nSET c x\r\nRENAME c d\r\nOBJECT REFCOUNT d\r\nEXEC\r\nOBJECT IDLETIME a\r\nOBJECT FREQ zz\r\n",
		"CONFIG SET slowlog-log-slower-than 0\r\nSLOWLOG GET -1\r\nSAVE\r\nBGSAVE\r\nLASTSAVE\r\nMONITOR\r\nPING\r\nGET k\r\nRESET\r\n",
		"EXEC x\r\nMULTI\r\nSET a 1\r\nEXEC now\r\nGET a\r\nDEBUG SLEEP 0\r\nMULTI\r\nDEBUG x\r\nBGSAVE\r\nEXEC\r\nCLIENT UNBLOCK 1 ERROR\r\n" +
			"SELECT 2147483648\r\nWATCH a\r\nSET a 2\r\nCLIENT INFO\r\nINFO cluster modules\r\nSUBSCRIBE c\r\nEXEC\r\nRESET\r\n",
		"AUTH nobody pw\r\nHELLO 2 AUTH x y\r\nACL LOG 1\r\nCONFIG SET acllog-max-len 0\r\nAUTH a b\r\nACL LOG\r\nACL CAT string\r\n" +
			"ACL DRYRUN default client\r\nACL DRYRUN default config get x\r\nACL GENPASS 4096\r\nACL GETUSER default\r\nACL LOG RESET\r\nACL SETUSER x >p\r\n",
		"FAILOVER\r\nFAILOVER ABORT\r\nFAILOVER TO 127.0.0.1 1 TIMEOUT 5 FORCE\r\nFAILOVER TIMEOUT 0\r\nPSYNC x 1 FAILOVER\r\nINFO replication\r\n",
		"HSET h a 1 b 2\r\nHINCRBY h a 9223372036854775807\r\nHINCRBYFLOAT h b 1e400\r\nHGETALL h\r\nHSCAN h 0 COUNT 0\r\n" +
			"HRANDFIELD h -5 WITHVALUES\r\nHMGET h a c\r\nHDEL h a b\r\nHSETNX h c 3\r\nRENAME h x\r\nDUMP x\r\nOBJECT ENCODING x\r\n",
		"SADD s 1 2 x\r\nSMOVE s t 1\r\nSINTERSTORE d s t\r\nSINTERCARD 2 s t LIMIT 1\r\nSPOP s 5\r\nSRANDMEMBER t -3\r\n" +
			"SSCAN t 0 MATCH *\r\nDUMP t\r\nCOPY t u\r\nSUNION t u nosuch\r\nSDIFF u t\r\nMEMORY USAGE u SAMPLES 0\r\n",
		"MULTI\r\nHSET h f v\r\nSADD s m\r\nDEL h\r\nHGETALL h\r\nSMEMBERS s\r\nSET s x\r\nSADD s y\r\nEXEC\r\nHLEN h\r\nSCARD s\r\n",
		"RPUSH l a b c\r\nLINSERT l BEFORE b x\r\nLREM l -1 a\r\nLSET l -1 z\r\nLTRIM l 1 -1\r\nLPOS l z RANK -1 COUNT 0 MAXLEN 9\r\n" +
			"LMOVE l m LEFT RIGHT\r\nLMPOP 2 x l RIGHT COUNT 9\r\nDUMP m\r\nLRANGE m -9223372036854775808 9223372036854775807\r\n",
		"MULTI\r\nBLPOP q 0\r\nRPUSH q a\r\nBRPOPLPUSH q q 0\r\nEXEC\r\nBLMPOP 0.01 1 q LEFT COUNT 5\r\nBLMOVE q q LEFT LEFT 0\r\nBLPOP q 0\r\n",
		"ZADD z GT CH INCR 1e308 a\r\nZADD z -0 b inf c 0x1p3 d\r\nZINCRBY z -inf c\r\nZRANGE z (1 +inf BYSCORE REV LIMIT 0 -1 WITHSCORES\r\n" +
			"ZRANGEBYLEX z [a (\x00 LIMIT -1 9223372036854775807\r\nZRANGESTORE y z 0 -9223372036854775808\r\nZUNIONSTORE u 2 z y WEIGHTS inf -inf AGGREGATE MIN\r\n" +
			"ZINTERCARD 2 z u LIMIT 1\r\nZREMRANGEBYLEX u - +\r\nZMPOP 1 z MAX COUNT 9\r\nZRANDMEMBER y -5 WITHSCORES\r\nZSCAN y 0\r\nDUMP y\r\nSORT y\r\n",
		"MULTI\r\nBZPOPMIN z 0\r\nZADD z 1 a\r\nBZMPOP 0 1 z MIN COUNT 5\r\nEXEC\r\nBZPOPMAX z 0.01\r\nZPOPMIN z -1\r\nZRANK z a\r\n",
		"PFADD h a b c\r\nPFCOUNT h x\r\nSETRANGE h 16 \"\\xff\\x7f\"\r\nPFADD h d\r\nPFMERGE m h x\r\nPFDEBUG TODENSE m\r\nPFDEBUG GETREG m\r\nGET m\r\n",
		"GEOADD g 13.361389 38.115556 a 15.087269 37.502669 b 180 85.05112878 c\r\nGEOADD g -181 0 d\r\nGEODIST g a b km\r\n" +
			"GEOSEARCH g FROMMEMBER a BYBOX 400 400 km ASC COUNT 1 ANY WITHCOORD WITHDIST WITHHASH\r\nGEORADIUS g 15 37 1e308 mi STORE s\r\nGEOHASH g a zz\r\n",
		"XADD x MAXLEN ~ 1 LIMIT 1 1-* f v g w\r\nXADD x 18446744073709551615-* a b\r\nXRANGE x (0 + COUNT 9\r\nXDEL x 1-0 1-1\r\n" +
			"XGROUP CREATE x g 0 MKSTREAM ENTRIESREAD -1\r\nXREADGROUP GROUP g c COUNT 1 NOACK STREAMS x x > 0\r\nXCLAIM x g d 0 1-0 FORCE RETRYCOUNT 9 LASTID 5\r\n" +
			"XAUTOCLAIM x g c 0 (0 COUNT 1 JUSTID\r\nXPENDING x g IDLE 1 - + 9 c\r\nXINFO STREAM x FULL COUNT 0\r\nDUMP x\r\nXSETID x 0 MAXDELETEDID 0\r\n",
		"MULTI\r\nXREAD BLOCK 0 STREAMS x $\r\nXADD x 1 a b\r\nXREADGROUP GROUP g c BLOCK 0 STREAMS x >\r\nEXEC\r\nXREAD BLOCK 1 STREAMS x x 0 $\r\nXTRIM x MINID = 2\r\n",
		"SHUTDOWN ABORT\r\nSHUTDOWN SAVE NOSAVE\r\nSHUTDOWN ABORT NOW\r\nCONFIG SET shutdown-timeout -1 shutdown-on-sigterm bogus\r\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	s := newTestServer(f)
	f.Fuzz(func(t *testing.T, input []byte) {
		s.exchange(t, input)
		// Whatever the input did, the server still serves: no key lock is
		// left held and the command path works.
		if err := s.env.Config.Set([]config.Pair{{Name: "requirepass", Value: ""}, {Name: "timeout", Value: "0"}}); err != nil {
			t.Fatal(err)
		}
		got := s.exchange(t, []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"))
		if want := "+OK\r\n$1\r\nv\r\n$6\r\nMARKER\r\n"; string(got) != want {
			t.Fatalf("after input %q the server answers %q, want %q", input, got, want)
		}
	})
}

func nullLogger() hclog.Logger { return hclog.NewNullLogger() }
