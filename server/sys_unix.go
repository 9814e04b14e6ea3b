package server

import "syscall"

const (
	syscallEMFILE = syscall.EMFILE
	syscallENFILE = syscall.ENFILE
)
