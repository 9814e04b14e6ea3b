//go:build linux

package main

// sysSchedSetattr is the number of the sched_setattr system call on amd64.
const sysSchedSetattr = 314
