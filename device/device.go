package device

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "vkx.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime/cgo"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Options configure Open.
type Options struct {
	// Validation enables VK_LAYER_KHRONOS_validation with synchronisation validation
	// and a debug-utils messenger. Every warning and error it reports is passed to
	// OnMessage and kept for ValidationErrors.
	Validation bool
	// Selector chooses the device: an index into List() or a case-insensitive
	// substring of its name. Empty: the environment variable VKXLA_DEVICE; if that is
	// empty too, the first of discrete > integrated > virtual > CPU.
	Selector string
	// OnMessage receives validation messages ("error", "warning"), possibly from a
	// driver thread. It must not call back into the Device.
	OnMessage func(severity, message string)
}

// Device is an opened Vulkan device with one compute queue. It is safe for use from
// many goroutines; queue submissions are serialised.
type Device struct {
	inst *C.vkx_instance
	c    *C.vkx_device
	caps Caps
	msgs *messages
	msgH cgo.Handle

	// life guards the C objects: every operation holds it for reading, Close for
	// writing, so nothing is destroyed while a call that uses it runs.
	life   sync.RWMutex
	closed bool

	queue sync.Mutex // vkQueueSubmit and vkDeviceWaitIdle need the queue to themselves

	mu       sync.Mutex // guards children
	children map[child]struct{}

	bufferTypes, stagingTypes []uint32
	mappable                  uint32
	forceStaging              bool // tests: treat device memory as not host-visible
}

// child is an object the device frees when it closes.
type child interface {
	// kill frees the object; the caller holds d.life for writing and the device is idle.
	kill()
}

// Open opens a device (see Options for the choice).
func Open(opts Options) (*Device, error) {
	msgs := &messages{on: opts.OnMessage}
	h := cgo.NewHandle(msgs)
	d, err := open(opts, msgs, h)
	if err != nil {
		h.Delete()
		return nil, err
	}
	return d, nil
}

func open(opts Options, msgs *messages, h cgo.Handle) (*Device, error) {
	inst, err := newInstance(opts.Validation, h)
	if err != nil {
		return nil, err
	}
	all := listCaps(inst)
	caps, err := choose(all, opts.Selector)
	if err != nil {
		C.vkx_instance_destroy(inst)
		return nil, err
	}
	var c *C.vkx_device
	if err := check(C.vkx_device_create(inst, C.uint32_t(caps.Index), &c)); err != nil {
		C.vkx_instance_destroy(inst)
		return nil, err
	}
	return &Device{
		inst: inst, c: c, caps: caps, msgs: msgs, msgH: h,
		children:    map[child]struct{}{},
		bufferTypes: caps.bufferTypes(), stagingTypes: caps.stagingTypes(), mappable: caps.mappable(),
	}, nil
}

func newInstance(validation bool, h cgo.Handle) (*C.vkx_instance, error) {
	v := C.int(0)
	if validation {
		v = 1
	}
	var inst *C.vkx_instance
	err := check(C.vkx_instance_create(v, C.uintptr_t(h), &inst))
	if e, ok := err.(*VkError); ok && e.Result == -6 {
		return nil, fmt.Errorf("%w (install vulkan-validationlayers, or open without validation)", err)
	}
	if err != nil {
		return nil, err
	}
	if C.vkx_physical_count(inst) == 0 {
		C.vkx_instance_destroy(inst)
		return nil, fmt.Errorf("%w: the Vulkan loader found no physical device", ErrNoDevice)
	}
	return inst, nil
}

func listCaps(inst *C.vkx_instance) []Caps {
	n := int(C.vkx_physical_count(inst))
	caps := make([]Caps, n)
	for i := range n {
		caps[i] = queryCaps(inst, i)
	}
	return caps
}

// List enumerates the physical devices (without opening any).
func List() ([]Caps, error) {
	inst, err := newInstance(false, 0)
	if err != nil {
		return nil, err
	}
	defer C.vkx_instance_destroy(inst)
	return listCaps(inst), nil
}

// choose applies the selector (or VKXLA_DEVICE) or the type preference.
func choose(all []Caps, selector string) (Caps, error) {
	if selector == "" {
		selector = os.Getenv("VKXLA_DEVICE")
	}
	var usable []Caps
	for _, c := range all {
		if c.usable() {
			usable = append(usable, c)
		}
	}
	if selector != "" {
		return selectDevice(all, usable, selector)
	}
	if len(usable) == 0 {
		return Caps{}, fmt.Errorf("%w: no device with Vulkan 1.1 and a compute queue among %s", ErrNoDevice, names(all))
	}
	slices.SortStableFunc(usable, func(a, b Caps) int { return a.DeviceType.preference() - b.DeviceType.preference() })
	return usable[0], nil
}

func selectDevice(all, usable []Caps, selector string) (Caps, error) {
	if i, err := strconv.Atoi(selector); err == nil {
		for _, c := range usable {
			if c.Index == i {
				return c, nil
			}
		}
		return Caps{}, fmt.Errorf("%w: device index %d is not a usable device among %s", ErrNoDevice, i, names(all))
	}
	for _, c := range usable {
		if strings.Contains(strings.ToLower(c.Name), strings.ToLower(selector)) {
			return c, nil
		}
	}
	return Caps{}, fmt.Errorf("%w: no usable device name contains %q among %s", ErrNoDevice, selector, names(all))
}

func names(all []Caps) string {
	var s []string
	for _, c := range all {
		s = append(s, fmt.Sprintf("%d:%q", c.Index, c.Name))
	}
	return "[" + strings.Join(s, " ") + "]"
}

// Caps returns the opened device's capabilities.
func (d *Device) Caps() Caps { return d.caps }

func (d *Device) String() string { return d.caps.String() }

// ValidationErrors returns the validation layer's warnings and errors so far, each as
// "severity: message".
func (d *Device) ValidationErrors() []string { return d.msgs.list() }

// enter makes the device's C objects safe to use until exit.
func (d *Device) enter() error {
	d.life.RLock()
	if d.closed {
		d.life.RUnlock()
		return ErrClosed
	}
	return nil
}

func (d *Device) exit() { d.life.RUnlock() }

// Closed reports whether Close has been called, so that a layer built on the device
// can refuse a closed one at once instead of at its first use.
func (d *Device) Closed() bool {
	d.life.RLock()
	defer d.life.RUnlock()
	return d.closed
}

func (d *Device) adopt(c child) {
	d.mu.Lock()
	d.children[c] = struct{}{}
	d.mu.Unlock()
}

func (d *Device) forget(c child) {
	d.mu.Lock()
	delete(d.children, c)
	d.mu.Unlock()
}

// WaitIdle waits until the device has finished all submitted work.
func (d *Device) WaitIdle() error {
	if err := d.enter(); err != nil {
		return err
	}
	defer d.exit()
	d.queue.Lock()
	defer d.queue.Unlock()
	return check(C.vkx_device_wait_idle(d.c))
}

// Close waits for the device to finish its work, frees every object still open on it
// (their later use returns ErrClosed), and destroys the device. A second Close does
// nothing.
func (d *Device) Close() error {
	d.life.Lock()
	defer d.life.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	d.queue.Lock()
	err := check(C.vkx_device_wait_idle(d.c))
	d.queue.Unlock()
	d.killChildren()
	C.vkx_device_destroy(d.c)
	// The validation layer reports leaks and instance-level problems during these two
	// calls, so the message handle lives until after them.
	C.vkx_instance_destroy(d.inst)
	d.msgH.Delete()
	d.c, d.inst = nil, nil
	return err
}

// killChildren frees command buffers first (they refer to the others), then the rest.
func (d *Device) killChildren() {
	d.mu.Lock()
	var cbs, rest []child
	for c := range d.children {
		if _, ok := c.(*CommandBuffer); ok {
			cbs = append(cbs, c)
		} else {
			rest = append(rest, c)
		}
	}
	d.mu.Unlock()
	for _, c := range append(cbs, rest...) {
		c.kill()
	}
}

// messages collects validation messages.
type messages struct {
	mu  sync.Mutex
	all []string
	on  func(severity, message string)
}

func (m *messages) add(severity, msg string) {
	m.mu.Lock()
	m.all = append(m.all, severity+": "+msg)
	on := m.on
	m.mu.Unlock()
	if on != nil {
		on(severity, msg)
	}
}

func (m *messages) list() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.all)
}

//export vkxGoMessage
func vkxGoMessage(handle C.uintptr_t, severity C.int, message *C.char) {
	if handle == 0 {
		return
	}
	m, ok := cgo.Handle(handle).Value().(*messages)
	if !ok {
		return
	}
	m.add(severityName(int(severity)), C.GoString(message))
}

func severityName(s int) string {
	switch {
	case s >= 0x1000:
		return "error"
	case s >= 0x100:
		return "warning"
	case s >= 0x10:
		return "info"
	}
	return "verbose"
}
