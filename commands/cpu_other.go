//go:build !unix

package commands

// cpuSeconds reports no CPU time where the process cannot read it.
func cpuSeconds() (user, sys float64) { return 0, 0 }
