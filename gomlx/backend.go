// Package gomlx is vkxla as a GoMLX backend: GoMLX programs (graphs, layers,
// optimizers, training loops) run on any Vulkan device through vkxla's compiler.
//
// Importing the package registers the backend under the name "vkxla":
//
//	import _ "github.com/vkxla/vkxla/gomlx"
//	// and run with GOMLX_BACKEND=vkxla (or vkxla:device=0,budget=1GiB,validation=1)
//
// The builder builds vkxla HLO (hlo.Builder) op for op; Compile compiles the
// module with vkxla.Runtime.Compile, whose cache keys executables by module
// fingerprint, so every shape GoMLX compiles is compiled once. Buffers are
// vkxla DeviceTensors: they stay in device memory between executions, and
// donated inputs are run in place (vkxla.WithDonation).
package gomlx

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/gomlx/gomlx/backends"

	"github.com/vkxla/vkxla"
)

// BackendName is the name the backend registers with GoMLX.
const BackendName = "vkxla"

func init() { backends.Register(BackendName, New) }

var (
	errUnsupportedDType = errors.New("element type not supported by vkxla")
	errFinalized        = errors.New("vkxla backend: finalized")
)

// Config holds the backend's options, parsed from the config string after
// "vkxla:" (GoMLX's convention, as simplego's "parallelism=4"): comma-separated
// key=value pairs.
//
//	device=N|NAME   the Vulkan device, by index or name substring (vkxla.WithDeviceSelector)
//	budget=SIZE     the memory budget every executable is compiled under (bytes, or KiB/MiB/GiB)
//	validation=0|1  the Khronos validation layer and SPIR-V validation (default: VKXLA_VALIDATION)
//	without=P1+P2   skip these optimisation passes (vkxla.WithoutPasses, as XLA's
//	                xla_disable_hlo_passes), e.g. without=constant-folding
type Config struct {
	Device     string
	Budget     int64
	Validation *bool
	Without    []string
}

// ParseConfig parses a config string; an unknown key or a bad value is an error
// naming it.
func ParseConfig(config string) (Config, error) {
	var c Config
	for _, part := range strings.Split(config, ",") {
		if part == "" {
			continue
		}
		key, value, _ := strings.Cut(part, "=")
		switch key {
		case "device":
			c.Device = value
		case "budget":
			n, err := parseBytes(value)
			if err != nil {
				return c, fmt.Errorf("vkxla backend: config %q: budget: %w", config, err)
			}
			c.Budget = n
		case "without":
			c.Without = strings.Split(value, "+")
		case "validation":
			on, err := strconv.ParseBool(value)
			if err != nil {
				return c, fmt.Errorf("vkxla backend: config %q: validation: want 0 or 1, got %q", config, value)
			}
			c.Validation = &on
		default:
			return c, fmt.Errorf("vkxla backend: config %q: unknown option %q (options: device=N|NAME, budget=SIZE, validation=0|1, without=PASS+PASS)", config, key)
		}
	}
	return c, nil
}

// parseBytes reads a byte count: a plain integer or one with a KiB, MiB or GiB
// suffix.
func parseBytes(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.n
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("want a non-negative byte count such as 1073741824 or 1GiB, got %q", s)
	}
	return n * mult, nil
}

// Backend is vkxla as a backends.Backend: one vkxla.Runtime (one Vulkan device).
type Backend struct {
	rt     *vkxla.Runtime
	config Config
	mu     sync.Mutex
	closed bool
	// last is the executable that ran last, for MemoryStats and LiveAtPeak;
	// largest the one of the largest planned peak that ran (LargestRun).
	last, largest *vkxla.Executable
	// compiled is the executable the last Builder.Compile returned.
	compiled *Executable
}

var _ backends.Backend = (*Backend)(nil)

// New opens the backend with a config string (see Config); it is the
// constructor registered with GoMLX.
func New(config string) (backends.Backend, error) {
	c, err := ParseConfig(config)
	if err != nil {
		return nil, err
	}
	return NewWithConfig(c)
}

// NewWithConfig opens the backend on the device c names. Backends of one
// configuration share one vkxla runtime (GoMLX programs and tests make a backend
// per use and rarely finalize it; each would otherwise hold a Vulkan device and
// its memory): the runtime closes when the last of them is finalized.
func NewWithConfig(c Config) (*Backend, error) {
	rt, err := shared.acquire(c)
	if err != nil {
		return nil, err
	}
	return &Backend{rt: rt, config: c}, nil
}

// runtimes holds the runtimes open backends share, by configuration.
type runtimes struct {
	mu   sync.Mutex
	open map[string]*sharedRuntime
}

type sharedRuntime struct {
	rt   *vkxla.Runtime
	refs int
}

var shared = &runtimes{open: map[string]*sharedRuntime{}}

func (c Config) key() string {
	v := "env"
	if c.Validation != nil {
		v = strconv.FormatBool(*c.Validation)
	}
	return c.Device + "|" + v
}

func (r *runtimes) acquire(c Config) (*vkxla.Runtime, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.open[c.key()]; ok {
		s.refs++
		return s.rt, nil
	}
	var opts []vkxla.RuntimeOption
	if c.Device != "" {
		opts = append(opts, vkxla.WithDeviceSelector(c.Device))
	}
	if c.Validation != nil {
		opts = append(opts, vkxla.WithValidation(*c.Validation), vkxla.WithSPIRVValidation(*c.Validation))
	}
	rt, err := vkxla.NewRuntime(opts...)
	if err != nil {
		return nil, fmt.Errorf("vkxla backend: %w", err)
	}
	r.open[c.key()] = &sharedRuntime{rt: rt, refs: 1}
	return rt, nil
}

// release drops one backend's hold on its runtime and closes it after the last.
func (r *runtimes) release(c Config) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.open[c.key()]
	if !ok {
		return nil
	}
	if s.refs--; s.refs > 0 {
		return nil
	}
	delete(r.open, c.key())
	return s.rt.Close()
}

// Runtime is the vkxla runtime the backend runs on (its device, caches and
// memory statistics).
func (b *Backend) Runtime() *vkxla.Runtime { return b.rt }

// Config is the configuration the backend was opened with.
func (b *Backend) Config() Config { return b.config }

// Name is "vkxla".
func (b *Backend) Name() string { return BackendName }

// String is Name.
func (b *Backend) String() string { return BackendName }

// Description names the device.
func (b *Backend) Description() string {
	return fmt.Sprintf("vkxla (Vulkan): %s", b.rt.Device())
}

// NumDevices is 1: a backend runs on one Vulkan device (open another backend
// with device=N for another).
func (b *Backend) NumDevices() int { return 1 }

// DeviceDescription describes the device.
func (b *Backend) DeviceDescription(backends.DeviceNum) string { return b.rt.Device().String() }

// Capabilities lists the ops the builder builds and the element types it takes.
func (b *Backend) Capabilities() backends.Capabilities { return capabilities.Clone() }

// Builder starts a computation.
func (b *Backend) Builder(name string) backends.Builder { return newBuilder(b, name) }

// Finalize releases the backend's runtime, which closes (its executables and
// device tensors with it) when no other open backend shares it.
func (b *Backend) Finalize() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	_ = shared.release(b.config) // Finalize has no error to return; Close returns it.
}

// Close is Finalize returning the runtime's error when it closes it
// (validation-layer messages included, as vkxla.ErrValidation).
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	return shared.release(b.config)
}

// IsFinalized reports whether Finalize was called.
func (b *Backend) IsFinalized() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

func (b *Backend) checkOpen() error {
	if b.IsFinalized() {
		return errFinalized
	}
	return nil
}

// MemoryStats is the planned device memory of the executable that ran last
// (peak bytes, arena and per-kind breakdown); ok is false before any run.
func (b *Backend) MemoryStats() (stats vkxla.MemoryStats, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.last == nil {
		return stats, false
	}
	return b.last.MemoryStats(), true
}

// LiveAtPeak lists the buffers live at the memory peak of the executable that
// ran last.
func (b *Backend) LiveAtPeak() []vkxla.LiveBuffer {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.last == nil {
		return nil
	}
	return b.last.LiveAtPeak()
}

// RuntimeMemoryStats is the device memory the runtime holds now (tensor pool,
// cached executables' arenas).
func (b *Backend) RuntimeMemoryStats() vkxla.RuntimeMemoryStats { return b.rt.MemoryStats() }

// LastRun is the vkxla executable that ran last (its Profile, MemoryStats,
// OptimizedModule); nil before any run.
func (b *Backend) LastRun() *vkxla.Executable {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last
}

// LargestRun is the module name and memory statistics of the executable with
// the largest planned peak among those that ran (a training loop's train step);
// ok is false before any run.
func (b *Backend) LargestRun() (module string, stats vkxla.MemoryStats, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.largest == nil {
		return "", stats, false
	}
	return b.largest.Module().Name, b.largest.MemoryStats(), true
}

// LastCompiled is the executable the last Builder.Compile returned (its HLO
// module and vkxla executable): for tools and benchmarks that look under a
// GoMLX program, which compiles through graph.Exec out of their sight.
func (b *Backend) LastCompiled() *Executable {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.compiled
}

func (b *Backend) ran(e *vkxla.Executable) {
	b.mu.Lock()
	b.last = e
	if b.largest == nil || e.MemoryStats().PeakBytes > b.largest.MemoryStats().PeakBytes {
		b.largest = e
	}
	b.mu.Unlock()
}
