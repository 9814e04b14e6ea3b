//go:build !race

package hll

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = false
