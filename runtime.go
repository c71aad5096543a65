package vkxla

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/vkxla/vkxla/arena"
	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// Runtime is an open Vulkan device with its compilation cache and a memory pool for
// device-resident tensors. It is safe for use from many goroutines.
type Runtime struct {
	dev     *device.Device
	ownsDev bool
	target  codegen.Target
	pool    *arena.Arena // device-resident tensors
	cache   *compileCache
	dumpDir string
	// validateSPIRV runs SPIRV-Tools' validator on every generated kernel.
	validateSPIRV bool

	mu     sync.Mutex
	closed bool
	live   map[*compiled]struct{} // every compiled state not yet released
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
	rt := &Runtime{dev: cfg.device, dumpDir: cfg.dumpDir, validateSPIRV: cfg.spirvCheck, live: map[*compiled]struct{}{}}
	if rt.dev == nil {
		d, err := device.Open(device.Options{Validation: cfg.validation, Selector: cfg.selector, OnMessage: cfg.onMessage})
		if err != nil {
			return nil, fmt.Errorf("vkxla: NewRuntime: %w", err)
		}
		rt.dev, rt.ownsDev = d, true
	}
	rt.target = TargetFromCaps(rt.dev.Caps())
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
func (rt *Runtime) ClearCaches() error { return rt.cache.clear() }

// CacheStats returns the compilation cache's counters.
func (rt *Runtime) CacheStats() CacheStats { return rt.cache.stats() }

// Close releases every executable (held by callers or cached), the tensor pool and
// the device (if the runtime opened it), so no Vulkan object of the runtime is left.
// Executables and tensors still held become unusable (ErrClosed).
func (rt *Runtime) Close() error {
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return nil
	}
	rt.closed = true
	live := make([]*compiled, 0, len(rt.live))
	for c := range rt.live {
		live = append(live, c)
	}
	rt.mu.Unlock()
	errs := []error{rt.cache.clear(), releaseAll(live), rt.pool.Close()}
	errs = append(errs, rt.closeDevice())
	return errors.Join(errs...)
}

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

func (rt *Runtime) checkOpen() error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return ErrClosed
	}
	return nil
}
