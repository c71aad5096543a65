package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// How cpuref's progress shows on a terminal: nothing for a check shorter than
// progressAfter, then one line rewritten at most every progressEvery.
const (
	progressAfter = 2 * time.Second
	progressEvery = 250 * time.Millisecond
)

// terminalProgress is the cpuref progress callback for f: nil unless f is a
// terminal (a character device), so logs and pipes stay clean.
func terminalProgress(f *os.File) func(done, total int, elapsed time.Duration) {
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return progressPrinter(f)
}

// progressPrinter writes "cpuref: 1200/12000 instructions, 14.0s" to w in place
// (carriage return), ending the line once the last instruction is done.
func progressPrinter(w io.Writer) func(done, total int, elapsed time.Duration) {
	var shown time.Duration = -1
	return func(done, total int, elapsed time.Duration) {
		if elapsed < progressAfter || (done < total && shown >= 0 && elapsed-shown < progressEvery) {
			return
		}
		shown = elapsed
		fmt.Fprintf(w, "\rcpuref: %d/%d instructions, %.1fs", done, total, elapsed.Seconds())
		if done == total {
			fmt.Fprintln(w)
		}
	}
}
