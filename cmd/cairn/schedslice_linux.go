//go:build linux && (amd64 || arm64)

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"unsafe"
)

// schedAttr is Linux's struct sched_attr (sched_setattr(2)).
type schedAttr struct {
	size, policy     uint32
	flags            uint64
	nice             int32
	priority         uint32
	runtime          uint64
	deadline, period uint64
	utilMin, utilMax uint32
}

// setSchedulerSlice asks the kernel for a time slice of us microseconds
// for every thread of the process. With SCHED_OTHER, Linux 6.12 and later
// (EEVDF) take sched_runtime as the thread's slice: a thread woken by the
// network with a short slice preempts a busy one sooner. Earlier kernels
// ignore it. Threads created later inherit it from the thread that
// creates them, so setting every current thread, until a pass finds no
// new one, covers the process. us of 0 leaves the kernel's default.
func setSchedulerSlice(us int) error {
	if us <= 0 {
		return nil
	}
	done := map[int]bool{}
	for range 5 {
		tasks, err := filepath.Glob("/proc/self/task/*")
		if err != nil {
			return fmt.Errorf("scheduler slice: list threads: %w", err)
		}
		fresh := false
		for _, t := range tasks {
			tid, err := strconv.Atoi(filepath.Base(t))
			if err != nil || done[tid] {
				continue
			}
			fresh = true
			a := schedAttr{size: uint32(unsafe.Sizeof(schedAttr{})), runtime: uint64(us) * 1000}
			_, _, e := syscall.Syscall(sysSchedSetattr, uintptr(tid), uintptr(unsafe.Pointer(&a)), 0)
			if e != 0 && e != syscall.ESRCH { // ESRCH: the thread has exited
				return fmt.Errorf("scheduler slice: thread %d: %w", tid, os.NewSyscallError("sched_setattr", e))
			}
			done[tid] = true
		}
		if !fresh {
			return nil
		}
	}
	return nil
}
