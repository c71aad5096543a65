package device

/*
#include "vkx.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// pollInterval bounds how long one fence wait blocks when the context can be
// cancelled; vkWaitForFences returns as soon as the fence signals, so it adds no
// latency.
const pollInterval = 10 * time.Millisecond

// Pending is a submission in flight.
type Pending struct {
	cb   *CommandBuffer
	refs []*resource // references taken at submission, released on completion
	done bool        // guarded by cb.mu
	err  error
}

// Submit submits cb and waits for it to complete. If ctx ends first it returns
// ctx's error wrapped; the work stays in flight, and the objects it uses stay alive
// until it completes (a later Begin, Submit or Close of cb waits for it).
func (d *Device) Submit(ctx context.Context, cb *CommandBuffer) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("device: Submit: %w", err)
	}
	p, err := d.SubmitAsync(cb)
	if err != nil {
		return err
	}
	return p.Wait(ctx)
}

// SubmitAsync submits cb without waiting. If cb is still in flight from an earlier
// submission, it first waits for that one.
func (d *Device) SubmitAsync(cb *CommandBuffer) (*Pending, error) {
	if cb == nil || cb.d != d {
		return nil, errors.New("device: Submit: nil command buffer or one of another device")
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.exit()
	return d.submit(cb)
}

func (d *Device) submit(cb *CommandBuffer) (*Pending, error) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if cb.closed {
		return nil, ErrClosed
	}
	if cb.state != cbExecutable {
		return nil, errors.New("device: Submit: the command buffer is not recorded (Begin ... End)")
	}
	if err := cb.idleLocked(); err != nil {
		return nil, err
	}
	refs, err := acquireAll(cb.uses)
	if err != nil {
		return nil, fmt.Errorf("device: Submit: the recording uses %w", err)
	}
	d.queue.Lock()
	err = check(C.vkx_submit(d.c, cb.c))
	d.queue.Unlock()
	if err != nil {
		releaseAll(refs)
		return nil, err
	}
	cb.pending = &Pending{cb: cb, refs: refs}
	cb.ran = true
	return cb.pending, nil
}

// acquireAll takes a reference on each of rs, or on none if one is closed.
func acquireAll(rs []*resource) ([]*resource, error) {
	refs := make([]*resource, 0, len(rs))
	for _, r := range rs {
		if err := r.acquire(); err != nil {
			releaseAll(refs)
			return nil, fmt.Errorf("device: a closed %s: %w", r.what, err)
		}
		refs = append(refs, r)
	}
	return refs, nil
}

func releaseAll(refs []*resource) {
	for _, r := range refs {
		r.release()
	}
}

// finish records completion and releases the submission's references (cb.mu held).
func (p *Pending) finish(err error) {
	if p.done {
		return
	}
	p.done, p.err = true, err
	releaseAll(p.refs)
	p.refs = nil
	if p.cb.pending == p {
		p.cb.pending = nil
	}
}

// pollLocked waits up to timeout for the submission in flight (cb.mu and d.life
// held) and reports whether none is left.
func (cb *CommandBuffer) pollLocked(timeout uint64) (bool, error) {
	p := cb.pending
	if p == nil {
		return true, nil
	}
	err := check(C.vkx_wait(cb.d.c, cb.c, C.uint64_t(timeout)))
	var ve *VkError
	if errors.As(err, &ve) && ve.Result == 2 { // VK_TIMEOUT
		return false, nil
	}
	p.finish(err)
	return true, err
}

// Wait waits for the submission to complete. If ctx ends first it returns ctx's error
// wrapped and the submission stays in flight (Wait may be called again).
func (p *Pending) Wait(ctx context.Context) error {
	if ctx.Done() == nil {
		return p.poll(^uint64(0), true)
	}
	for {
		err := p.poll(uint64(pollInterval), false)
		if !errors.Is(err, errPending) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("device: waiting for a submission: %w", ctx.Err())
		default:
		}
	}
}

var errPending = errors.New("device: submission in flight")

// poll waits up to timeout; errPending means not yet complete.
func (p *Pending) poll(timeout uint64, forever bool) error {
	cb := p.cb
	if err := cb.d.enter(); err != nil {
		cb.mu.Lock()
		defer cb.mu.Unlock()
		if p.done {
			return p.err
		}
		return err
	}
	defer cb.d.exit()
	cb.mu.Lock()
	defer cb.mu.Unlock()
	for !p.done {
		if done, err := cb.pollLocked(timeout); err != nil || done {
			break
		}
		if !forever {
			return errPending
		}
	}
	return p.err
}

// waitForever waits with d.life already held.
func (p *Pending) waitForever() error {
	p.cb.mu.Lock()
	defer p.cb.mu.Unlock()
	for !p.done {
		if _, err := p.cb.pollLocked(^uint64(0)); err != nil {
			return err
		}
	}
	return p.err
}

// Done reports whether the submission has completed, without blocking.
func (p *Pending) Done() bool {
	return p.poll(0, false) == nil || p.isDone()
}

func (p *Pending) isDone() bool {
	p.cb.mu.Lock()
	defer p.cb.mu.Unlock()
	return p.done
}
