//go:build linux && amd64

package tests

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// schedSetattr is the number of the sched_setattr system call (amd64).
const schedSetattr = 314

// threadSlices returns the se.slice (nanoseconds) of every thread of pid,
// as /proc reports it, and false when the kernel does not report it.
func threadSlices(t *testing.T, pid int) ([]int64, bool) {
	t.Helper()
	tasks, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/sched")
	if err != nil || len(tasks) == 0 {
		t.Fatalf("threads of %d: %v", pid, err)
	}
	var out []int64
	for _, f := range tasks {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // the thread exited
		}
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == "se.slice" {
				n, _ := strconv.ParseInt(f[2], 10, 64)
				out = append(out, n)
			}
		}
	}
	return out, len(out) > 0
}

// customSlices reports whether the kernel takes a thread's own slice: it
// asks for 300 µs on a thread of the test, reads it back, and asks for the
// default again (a runtime of 0) before the thread serves anything else,
// so no thread of the test, nor one cloned from it later, keeps it.
func customSlices(t *testing.T) bool {
	setSlice := func(ns uint64) syscall.Errno {
		attr := make([]byte, 56) // struct sched_attr: size, policy, flags, nice, priority, runtime, ...
		binary.NativeEndian.PutUint32(attr[0:], 56)
		binary.NativeEndian.PutUint64(attr[24:], ns)
		_, _, e := syscall.Syscall(schedSetattr, 0, uintptr(unsafe.Pointer(&attr[0])), 0)
		return e
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if e := setSlice(300000); e != 0 {
		return false
	}
	data, _ := os.ReadFile("/proc/thread-self/sched")
	if e := setSlice(0); e != 0 {
		t.Fatalf("sched_setattr back to the default: %v", e)
	}
	return slices.ContainsFunc(strings.Split(string(data), "\n"), func(l string) bool {
		f := strings.Fields(l)
		return len(f) == 3 && f[0] == "se.slice" && f[2] == "300000"
	})
}

// TestSchedulerSlice checks that scheduler-slice-us reaches every thread
// of the server, including those Go starts under load after start-up,
// and that 0 leaves the kernel's default. On a kernel without custom
// slices (before Linux 6.12) only the start-up is checked.
func TestSchedulerSlice(t *testing.T) {
	own, _ := threadSlices(t, os.Getpid()) // the kernel's default, before customSlices
	n := StartCairn(t, "--scheduler-slice-us", "250")
	rdb := n.Client()
	c := ctx(t)
	for i := range 2000 {
		if err := rdb.Set(c, "k"+strconv.Itoa(i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if !customSlices(t) {
		t.Logf("this kernel takes no custom slices; the server started and served")
		return
	}
	got, _ := threadSlices(t, n.cmd.Process.Pid)
	for _, s := range got {
		if s != 250000 {
			t.Fatalf("a server thread has slice %d ns, want 250000: %v", s, got)
		}
	}

	d := StartCairn(t, "--scheduler-slice-us", "0")
	def, _ := threadSlices(t, d.cmd.Process.Pid)
	for _, s := range def {
		if s != own[0] {
			t.Fatalf("with 0, a server thread has slice %d ns, the kernel's default is %d: %v", s, own[0], def)
		}
	}
}
