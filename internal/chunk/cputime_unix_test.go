//go:build unix

package chunk

import (
	"syscall"
	"time"
)

// cpuTime returns the user+system CPU time this process has used, so that
// benchmarks can report a figure that other load on the machine does not
// inflate.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
