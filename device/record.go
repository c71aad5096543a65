package device

import (
	"errors"
	"fmt"
	"time"
)

// Command is one step of a recording: a dispatch of Kernel over Groups with
// Bindings and Push, or, when Kernel is nil, a copy of min(Src.Size, Dst.Size)
// bytes from Src to Dst.
type Command struct {
	Kernel   *Kernel
	Bindings []BufferRange
	Push     []byte
	Groups   [3]uint32
	Src, Dst BufferRange
	// Overlaps says the command touches no memory that a command since the last
	// barrier writes, nor writes memory one of them reads: Record puts no barrier
	// before it, so the device may run it beside them (a host-offload copy beside
	// a kernel). The caller, who knows every range a kernel reaches (by binding or
	// by device address), decides. In a timed recording the timestamps stay
	// (both at the bottom of the pipe): a dispatch beside others is timed from
	// the moment all before it completed to the moment it and they did, so the
	// spans still add up to the recording's time.
	Overlaps bool
}

// CommandError is Record's error for the command at Index.
type CommandError struct {
	Index int
	Err   error
}

func (e *CommandError) Error() string { return fmt.Sprintf("command %d: %v", e.Index, e.Err) }
func (e *CommandError) Unwrap() error { return e.Err }

// Record records cmds into a new command buffer the way every recording of the
// project runs (the runtime's executables and bench's hand-written kernels): a full
// barrier between consecutive commands, since each may read what the one before
// wrote, and, when timed, timestamps 2i and 2i+1 around the i-th dispatch
// (DispatchTimes reads them). The caller owns the command buffer; on an error it
// is closed and a *CommandError names the command.
func (d *Device) Record(cmds []Command, timed bool) (*CommandBuffer, error) {
	cb, err := d.NewCommandBuffer()
	if err != nil {
		return nil, err
	}
	if err := record(cb, cmds, timed); err != nil {
		return nil, errors.Join(err, cb.Close())
	}
	return cb, nil
}

func record(cb *CommandBuffer, cmds []Command, timed bool) error {
	if timed {
		if err := cb.EnableTimestamps(2 * countDispatches(cmds)); err != nil {
			return err
		}
	}
	if err := cb.Begin(); err != nil {
		return err
	}
	n := 0 // dispatches so far
	for i, c := range cmds {
		if i > 0 && !c.Overlaps {
			if err := cb.Barrier(); err != nil {
				return err
			}
		}
		if err := recordCommand(cb, c, timed, n); err != nil {
			return &CommandError{Index: i, Err: err}
		}
		if c.Kernel != nil {
			n++
		}
	}
	return cb.End()
}

// recordCommand records one command; n is the dispatch's number among the
// recording's dispatches, for its timestamps.
func recordCommand(cb *CommandBuffer, c Command, timed bool, n int) error {
	if c.Kernel == nil {
		return cb.Copy(c.Src.Buffer, c.Src.Offset, c.Dst.Buffer, c.Dst.Offset, min(c.Src.Size, c.Dst.Size))
	}
	if timed {
		if err := cb.Timestamp(2 * n); err != nil {
			return err
		}
	}
	if err := cb.Dispatch(c.Kernel, c.Bindings, c.Push, c.Groups[0], c.Groups[1], c.Groups[2]); err != nil {
		return err
	}
	if timed {
		return cb.Timestamp(2*n + 1)
	}
	return nil
}

func countDispatches(cmds []Command) int {
	n := 0
	for _, c := range cmds {
		if c.Kernel != nil {
			n++
		}
	}
	return n
}

// DispatchTimes is each dispatch's device time in the last submission of a timed
// recording made by Record.
func (cb *CommandBuffer) DispatchTimes() ([]time.Duration, error) {
	ts, err := cb.Timestamps()
	if err != nil {
		return nil, err
	}
	times := make([]time.Duration, len(ts)/2)
	for i := range times {
		times[i] = ts[2*i+1] - ts[2*i]
	}
	return times, nil
}
