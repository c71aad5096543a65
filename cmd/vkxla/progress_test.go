package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestProgressPrinter: silent for the first two seconds, then at most one update
// per quarter second, and a final line with the newline.
func TestProgressPrinter(t *testing.T) {
	var b strings.Builder
	p := progressPrinter(&b)
	p(1, 10, time.Second)
	require.Empty(t, b.String(), "a short check prints nothing")
	p(2, 10, 2*time.Second)
	p(3, 10, 2*time.Second+100*time.Millisecond) // too soon after the last line
	p(4, 10, 3*time.Second)
	p(10, 10, 3*time.Second+time.Millisecond) // the end always shows
	require.Equal(t, "\rcpuref: 2/10 instructions, 2.0s\rcpuref: 4/10 instructions, 3.0s\rcpuref: 10/10 instructions, 3.0s\n", b.String())
}

// TestTerminalProgressOnlyOnTerminals: a regular file (as a redirected stderr is)
// gets no progress callback.
func TestTerminalProgressOnlyOnTerminals(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	require.NoError(t, err)
	defer f.Close()
	require.Nil(t, terminalProgress(f))
}
