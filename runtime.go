package vkxla

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vkxla/vkxla/arena"
	"github.com/vkxla/vkxla/device"
)

// Runtime is an open Vulkan device with its compilation cache and a memory pool for
// device-resident tensors. It is safe for use from many goroutines.
type Runtime struct {
	dev     *device.Device
	ownsDev bool
	pool    *arena.Arena // device-resident tensors
	cache   *compileCache
	dumpDir string
	// validateSPIRV runs SPIRV-Tools' validator on every generated kernel.
	validateSPIRV bool

	mu     sync.Mutex
	closed bool
	live   map[*compiled]struct{} // every compiled state not yet released
	// tableBytes is the device memory of every recording's address tables
	// (bindings.go), which the executables' plans leave out.
	tableBytes atomic.Int64
	// busy counts the calls in flight that use the runtime's device state
	// (compiles, runs, transfers, tensor frees). Close waits for them after
	// refusing new ones, so it never frees what a call is using; compiles see the
	// closing runtime at their next stage and stop.
	busy sync.WaitGroup
}

// RuntimeOption configures NewRuntime.
type RuntimeOption func(*runtimeConfig)

type runtimeConfig struct {
	selector     string
	validation   bool
	onMessage    func(severity, message string)
	device       *device.Device
	cacheEntries int
	cacheBytes   int64
	dumpDir      string
	spirvCheck   bool
}

// WithDeviceSelector chooses the device by index or name substring, as the
// VKXLA_DEVICE environment variable does (the option wins).
func WithDeviceSelector(s string) RuntimeOption { return func(c *runtimeConfig) { c.selector = s } }

// WithValidation turns the Khronos validation layer on or off (default: on when the
// environment variable VKXLA_VALIDATION is 1).
func WithValidation(on bool) RuntimeOption { return func(c *runtimeConfig) { c.validation = on } }

// WithValidationHandler receives every validation warning and error.
func WithValidationHandler(f func(severity, message string)) RuntimeOption {
	return func(c *runtimeConfig) { c.onMessage = f }
}

// WithDevice runs on an already open device, which the runtime does not close.
func WithDevice(d *device.Device) RuntimeOption { return func(c *runtimeConfig) { c.device = d } }

// WithCacheLimits bounds the compilation cache by entries and by device bytes held
// by cached executables (least recently used go first).
func WithCacheLimits(entries int, bytes int64) RuntimeOption {
	return func(c *runtimeConfig) { c.cacheEntries, c.cacheBytes = entries, bytes }
}

// WithSPIRVValidation runs SPIRV-Tools' validator on every generated kernel before
// it reaches the driver (default: on when VKXLA_VALIDATION is 1, as in the tests).
func WithSPIRVValidation(on bool) RuntimeOption { return func(c *runtimeConfig) { c.spirvCheck = on } }

// WithDumpDir writes every compiled module and kernel there (as VKXLA_DUMP does).
// NewRuntime fails when the directory cannot be created or written; a dump write
// that fails later fails that Compile (see docs/runtime.md).
func WithDumpDir(dir string) RuntimeOption { return func(c *runtimeConfig) { c.dumpDir = dir } }

// NewRuntime opens a Vulkan device.
func NewRuntime(opts ...RuntimeOption) (*Runtime, error) {
	cfg := runtimeConfig{
		validation:   os.Getenv("VKXLA_VALIDATION") == "1",
		spirvCheck:   os.Getenv("VKXLA_VALIDATION") == "1",
		cacheEntries: 64,
		cacheBytes:   1 << 30,
		dumpDir:      os.Getenv("VKXLA_DUMP"),
	}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.device != nil && cfg.device.Closed() {
		return nil, fmt.Errorf("vkxla: NewRuntime: WithDevice: the device %s is closed (%w)", cfg.device, ErrClosed)
	}
	if cfg.dumpDir != "" {
		if err := checkDumpDir(cfg.dumpDir); err != nil {
			return nil, fmt.Errorf("vkxla: NewRuntime: %w", err)
		}
	}
	rt := &Runtime{dev: cfg.device, dumpDir: cfg.dumpDir, validateSPIRV: cfg.spirvCheck, live: map[*compiled]struct{}{}}
	if rt.dev == nil {
		d, err := device.Open(device.Options{Validation: cfg.validation, Selector: cfg.selector, OnMessage: cfg.onMessage})
		if err != nil {
			return nil, fmt.Errorf("vkxla: NewRuntime: %w", err)
		}
		rt.dev, rt.ownsDev = d, true
	}
	pool, err := arena.New(rt.dev, arena.Options{})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("vkxla: NewRuntime: %w", err), rt.closeDevice())
	}
	rt.pool = pool
	rt.cache = newCompileCache(cfg.cacheEntries, cfg.cacheBytes)
	return rt, nil
}

// Device returns the runtime's device.
func (rt *Runtime) Device() *device.Device { return rt.dev }

// ClearCaches drops every cached executable; those no caller holds release their
// device memory now, the others when their holders Close them.
func (rt *Runtime) ClearCaches() error {
	if err := rt.enter(); err != nil {
		return err
	}
	defer rt.exit()
	return rt.cache.clear()
}

// CacheStats returns the compilation cache's counters.
func (rt *Runtime) CacheStats() CacheStats { return rt.cache.stats() }

// Close releases every executable (held by callers or cached), the tensor pool and
// the device (if the runtime opened it), so no Vulkan object of the runtime is left.
// Calls already in flight finish first: Close waits for runs and transfers, and
// stops compiles at their next stage (they return ErrClosed). Later calls, and
// executables and tensors still held, return ErrClosed.
func (rt *Runtime) Close() error {
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return nil
	}
	rt.closed = true
	rt.mu.Unlock()
	rt.busy.Wait()
	// Nothing is in flight now, and nothing new can start: the live set is final.
	rt.mu.Lock()
	live := make([]*compiled, 0, len(rt.live))
	for c := range rt.live {
		live = append(live, c)
	}
	rt.mu.Unlock()
	errs := []error{rt.cache.clear(), releaseAll(live), rt.pool.Close()}
	errs = append(errs, rt.closeDevice())
	return errors.Join(errs...)
}

// errRuntimeClosed is what every call on a closed (or closing) runtime returns.
var errRuntimeClosed = fmt.Errorf("vkxla: the runtime is closed (%w)", ErrClosed)

// enter admits a call that uses the runtime's device state; it fails once Close
// has begun. Every successful enter is paired with exit.
func (rt *Runtime) enter() error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return errRuntimeClosed
	}
	rt.busy.Add(1)
	return nil
}

func (rt *Runtime) exit() { rt.busy.Done() }

// track registers a compiled state so that Close releases it; it fails once the
// runtime is closed.
func (rt *Runtime) track(c *compiled) error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return ErrClosed
	}
	rt.live[c] = struct{}{}
	return nil
}

func (rt *Runtime) untrack(c *compiled) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	delete(rt.live, c)
}

// closeDevice closes a device the runtime opened and reports what the validation
// layer said (leaks at destruction included), so a caller that turned validation on
// without a handler still hears about it.
func (rt *Runtime) closeDevice() error {
	if !rt.ownsDev {
		return nil
	}
	err := rt.dev.Close()
	if msgs := rt.dev.ValidationErrors(); len(msgs) > 0 {
		err = errors.Join(err, fmt.Errorf("%w (%d):\n%s", ErrValidation, len(msgs), strings.Join(msgs, "\n")))
	}
	return err
}

// checkOpen reports ErrClosed once Close has begun: a compile in flight looks at
// it between stages.
func (rt *Runtime) checkOpen() error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return errRuntimeClosed
	}
	return nil
}
