package tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// dieWithTests has the kernel kill cmd's process when the test binary
// goes (a timeout's panic skips the cleanups that stop the servers).
func dieWithTests(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// waitStopped waits until process pid has stopped (SIGSTOP): kill
// returns before a process running on another CPU has, and a test that
// sends the stopped node data must know it can no longer answer.
func waitStopped(pid int) error {
	path := fmt.Sprintf("/proc/%d/stat", pid)
	deadline := time.Now().Add(10 * time.Second)
	for {
		stat, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		// pid (comm) state ...: comm may hold spaces and parentheses.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'T' {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d not stopped after 10s: %s", pid, stat)
		}
		time.Sleep(time.Millisecond)
	}
}
