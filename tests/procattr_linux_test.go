package tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// dieWithTests has the kernel kill cmd's process when the test binary
// goes (a timeout's panic skips the cleanups that stop the servers).
func dieWithTests(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// stopped reports whether process pid has stopped (SIGSTOP), false when
// its state cannot be read.
func stopped(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return err == nil && i >= 0 && i+2 < len(stat) && stat[i+2] == 'T'
}
