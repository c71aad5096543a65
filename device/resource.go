package device

import "sync"

// resource is the lifetime of a buffer or kernel. Recorded command buffers may refer
// to it; each submission holds a reference until it completes, and Close frees the C
// object only when no reference is left, so closing a buffer that the device is still
// reading never frees memory in use. All methods run with d.life held.
type resource struct {
	d      *Device
	mu     sync.Mutex
	closed bool // Close was called; no new use
	freed  bool
	refs   int    // recordings, in-flight submissions and host copies using it
	free   func() // destroys the C object
	what   string // "buffer", "kernel": for error messages
}

func (r *resource) init(d *Device, what string, free func()) {
	r.d, r.what, r.free = d, what, free
}

// acquire takes a reference, failing with ErrClosed after Close.
func (r *resource) acquire() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	r.refs++
	return nil
}

// retain takes a reference on a resource already held alive by the caller (its
// Close may have been called since; the object is still there).
func (r *resource) retain() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refs++
}

func (r *resource) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refs--
	if r.closed && r.refs == 0 {
		r.freeLocked()
	}
}

func (r *resource) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// close marks the resource closed and frees it unless references remain.
func (r *resource) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	if r.refs == 0 {
		r.freeLocked()
	}
}

// kill frees the resource whatever its references: the device is idle and closing.
func (r *resource) kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	r.freeLocked()
}

func (r *resource) freeLocked() {
	if r.freed {
		return
	}
	r.freed = true
	r.free()
}
