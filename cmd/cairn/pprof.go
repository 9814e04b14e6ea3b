//go:build pprof

package main

import (
	"net"
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof on http.DefaultServeMux
	"os"
)

// A binary built with `go build -tags pprof ./cmd/cairn` serves Go's
// profiles on CAIRN_PPROF_ADDR (a loopback address such as
// 127.0.0.1:6061) when that variable is set; docs/performance.md uses it.
// Release builds do not contain this file.
func init() {
	addr := os.Getenv("CAIRN_PPROF_ADDR")
	if addr == "" {
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		os.Stderr.WriteString("cairn: CAIRN_PPROF_ADDR: " + err.Error() + "\n")
		os.Exit(1)
	}
	go http.Serve(ln, nil)
}
