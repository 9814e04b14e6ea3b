package tests

import (
	"os/exec"
	"syscall"
)

// dieWithTests has the kernel kill cmd's process when the test binary
// goes (a timeout's panic skips the cleanups that stop the servers).
func dieWithTests(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
