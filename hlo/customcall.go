package hlo

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The custom-call registry: XLA's extension point. A custom_call_target names an
// entry of one of two kinds. A decomposition target's Expand builds the HLO the
// call stands for: the custom-call expander pass (and cpuref) replace the call by
// it. A kernel target runs a user-supplied SPIR-V compute kernel: the call stays
// and code generation dispatches the kernel, while cpuref computes the call with
// the entry's Go Reference (or evaluates its Expand). Users register their own
// targets from Go; `vkxla run -identity-target NAME` registers pass-through
// targets. docs/custom-calls.md lists the built-in targets and how to register one.

// CustomCallExpansion builds a custom-call's decomposition in b. operands are b's
// parameters, one per operand of call with its shape; call gives the attributes
// (call.Attrs.CustomCall), the called computations and the declared result shape.
// It returns the root, whose shape must be call.Shape, or an error saying what the
// call got wrong.
type CustomCallExpansion func(b *Builder, call *Instruction, operands []*Instruction) (*Instruction, error)

// CustomCallReference computes a kernel target's result on the host from the
// operands' values (one literal per operand); it returns a literal of call.Shape.
type CustomCallReference func(call *Instruction, operands []*Literal) (*Literal, error)

// SPIRVKernel is a user-supplied compute kernel. Its storage buffers are descriptor
// set 0, bindings 0, 1, …: the call's operands in order, then its results (the
// elements of a tuple result, or the one array), each a runtime array of the
// element's type (or of vectors of it). Code generation checks that and the count
// against the call, naming the target and the instruction; SPIRV-Tools validates
// the module at compile time (vkxla.RegisterKernelTarget also does at
// registration).
type SPIRVKernel struct {
	// Words is the SPIR-V module (for Vulkan 1.1 or older), EntryPoint its
	// GLCompute entry point.
	Words      []uint32
	EntryPoint string
	// Groups is the workgroup count of a call (its operand shapes are
	// call.Operands[i].Shape, its result call.Shape); an error refuses shapes the
	// kernel does not handle.
	Groups func(call *Instruction) ([3]uint32, error)
	// Push gives the push-constant bytes of a call (sizes, strides, …); nil for a
	// kernel without push constants.
	Push func(call *Instruction) ([]byte, error)
}

// spirvMagic is the first word of every SPIR-V module (spirv.MagicNumber; hlo
// imports no other package).
const spirvMagic = 0x07230203

// CustomCallTarget is one registry entry: a decomposition target (Expand), or a
// kernel target (Kernel, with a Reference or an Expand that defines it for cpuref).
type CustomCallTarget struct {
	// Name is the custom_call_target it serves.
	Name string
	// Summary is one line on what the target computes.
	Summary string
	// Expand builds the decomposition: the lowering of a decomposition target, and
	// for a kernel target the definition cpuref evaluates (and autodiff
	// differentiates) when it has no Reference.
	Expand CustomCallExpansion
	// Kernel makes the entry a kernel target; Reference is its host definition.
	Kernel    *SPIRVKernel
	Reference CustomCallReference
	// identity marks the pass-through targets (RegisterIdentityTarget).
	identity bool
	// placement marks XLA's host-offload targets, MoveToHost and MoveToDevice:
	// the value unchanged (Expand, for cpuref and autodiff), which the compiler
	// keeps as a copy between device and host memory (hlo.Placement).
	placement bool
}

// check says what a registration lacks.
func (t CustomCallTarget) check() error {
	switch {
	case t.Name == "":
		return errors.New("hlo: a custom-call target needs a name")
	case t.Kernel == nil && t.Expand == nil:
		return fmt.Errorf("hlo: custom-call target %q needs an Expand function or a Kernel", t.Name)
	case t.Kernel == nil:
		return nil
	case t.Reference == nil && t.Expand == nil:
		return fmt.Errorf("hlo: kernel target %q needs a Reference function or an Expand decomposition, which cpuref checks the kernel against", t.Name)
	case len(t.Kernel.Words) < 5 || t.Kernel.Words[0] != spirvMagic:
		return fmt.Errorf("hlo: kernel target %q: Words is not a SPIR-V module (no header with the magic number %#x)", t.Name, spirvMagic)
	case t.Kernel.EntryPoint == "":
		return fmt.Errorf("hlo: kernel target %q names no entry point", t.Name)
	case t.Kernel.Groups == nil:
		return fmt.Errorf("hlo: kernel target %q has no Groups function (the workgroup count of a call)", t.Name)
	}
	return nil
}

// KernelTarget returns the kernel target a custom-call runs, if it runs one.
func KernelTarget(in *Instruction) (CustomCallTarget, bool) {
	if in.Op != OpCustomCall || in.Attrs.CustomCall == nil {
		return CustomCallTarget{}, false
	}
	t, ok := LookupCustomCall(in.Attrs.CustomCall.Target)
	return t, ok && t.Kernel != nil
}

// The host-offload targets, as XLA's host offloading writes them (JAX's
// save_and_offload_only_these_names, memory kind pinned_host): MoveToHost's
// result lives in host memory, MoveToDevice's on the device again.
const (
	MoveToHostTarget   = "MoveToHost"
	MoveToDeviceTarget = "MoveToDevice"
)

// Placement is the memory a host-offload custom-call moves its operand to:
// toHost for MoveToHost, false for MoveToDevice; ok is false for any other
// instruction.
func Placement(in *Instruction) (toHost, ok bool) {
	switch {
	case IsCustomCallTo(in, MoveToHostTarget):
		return true, true
	case IsCustomCallTo(in, MoveToDeviceTarget):
		return false, true
	}
	return false, false
}

// HostResident reports an array parameter p that only MoveToDevice copies read
// (users are its readers): the planner keeps it in host memory, as JAX's
// argument of memory kind pinned_host, unless the caller provides its memory.
func HostResident(p *Instruction, users []*Instruction) bool {
	if !p.Shape.IsArray() || len(users) == 0 {
		return false
	}
	for _, u := range users {
		if toHost, ok := Placement(u); !ok || toHost {
			return false
		}
	}
	return true
}

// MoveToHost is a custom-call MoveToHost of x: x's value in host memory.
func (b *Builder) MoveToHost(x *Instruction) *Instruction {
	return b.CustomCall(MoveToHostTarget, []*Instruction{x}, x.Shape, &CustomCallAttrs{HasSideEffect: true})
}

// MoveToDevice is a custom-call MoveToDevice of x: x's value in device memory.
func (b *Builder) MoveToDevice(x *Instruction) *Instruction {
	return b.CustomCall(MoveToDeviceTarget, []*Instruction{x}, x.Shape, nil)
}

// ErrUnknownCustomCall is wrapped by the error for a custom_call_target nobody
// registered.
var ErrUnknownCustomCall = errors.New("unknown custom-call target")

// ErrDuplicateCustomCall is wrapped by the error for registering a name that is
// already registered; the first registration stays.
var ErrDuplicateCustomCall = errors.New("custom-call target already registered")

var customCalls = struct {
	sync.RWMutex
	byName map[string]CustomCallTarget
}{byName: map[string]CustomCallTarget{}}

// RegisterCustomCall adds a target. Names are registered once: a second
// registration of a name is an error wrapping ErrDuplicateCustomCall and leaves
// the first in place, so that a compiled (and cached) program never changes
// meaning under it. It is safe to call from many goroutines.
func RegisterCustomCall(t CustomCallTarget) error {
	return register(t, false)
}

// RegisterIdentityTarget registers name as a pass-through target: one operand,
// a result of the same shape, the operand's value (as XLA's sharding and placement
// annotations are on one device). Registering a name that is already an identity
// target is not an error, from any number of goroutines at once.
func RegisterIdentityTarget(name string) error {
	return register(identityTarget(name), true)
}

// register adds t unless its name is taken; sameIdentity accepts a name already
// registered as an identity target when t is one. The check and the insertion
// are under one lock: two goroutines registering one identity target both
// succeed.
func register(t CustomCallTarget, sameIdentity bool) error {
	if err := t.check(); err != nil {
		return err
	}
	customCalls.Lock()
	defer customCalls.Unlock()
	if old, dup := customCalls.byName[t.Name]; dup {
		if sameIdentity && old.identity {
			return nil
		}
		return fmt.Errorf("hlo: %w: %q (a name is registered once)", ErrDuplicateCustomCall, t.Name)
	}
	customCalls.byName[t.Name] = t
	return nil
}

// LookupCustomCall returns the entry registered for a target name.
func LookupCustomCall(name string) (CustomCallTarget, bool) {
	customCalls.RLock()
	defer customCalls.RUnlock()
	t, ok := customCalls.byName[name]
	return t, ok
}

// CustomCallTargets lists the registered targets by name.
func CustomCallTargets() []CustomCallTarget {
	customCalls.RLock()
	defer customCalls.RUnlock()
	ts := make([]CustomCallTarget, 0, len(customCalls.byName))
	for _, t := range customCalls.byName {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b CustomCallTarget) int { return strings.Compare(a.Name, b.Name) })
	return ts
}

// unknownTarget is the error for an unregistered target.
func unknownTarget(target, inst string) error {
	return fmt.Errorf("%w %q in custom-call %s: register it with hlo.RegisterCustomCall, "+
		"or pass -identity-target %s to vkxla run if it passes its operand through", ErrUnknownCustomCall, target, inst, target)
}

// ExpandCustomCall builds the decomposition of a custom-call as a computation whose
// parameters are the call's operands and whose root is its result. The expander
// pass splices it in place of the call; cpuref evaluates it.
func ExpandCustomCall(call *Instruction) (*Computation, error) {
	cc := call.Attrs.CustomCall
	if call.Op != OpCustomCall || cc == nil {
		return nil, fmt.Errorf("%s is not a custom-call", call.Name)
	}
	t, ok := LookupCustomCall(cc.Target)
	if !ok {
		return nil, unknownTarget(cc.Target, call.Name)
	}
	if t.Expand == nil {
		return nil, fmt.Errorf("custom-call %s: target %q is a SPIR-V kernel defined by a Go function, without an HLO decomposition", call.Name, cc.Target)
	}
	b := NewBuilder(call.Name + ".expansion")
	params := make([]*Instruction, len(call.Operands))
	for i, x := range call.Operands {
		params[i] = b.Parameter(x.Shape, fmt.Sprintf("%s.arg%d", call.Name, i))
	}
	root, err := t.Expand(b, call, params)
	if err == nil {
		err = b.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("custom-call %s (target %q): %w", call.Name, cc.Target, err)
	}
	if root == nil || !root.Shape.Equal(call.Shape) {
		got := "nil"
		if root != nil {
			got = root.Shape.String()
		}
		return nil, fmt.Errorf("custom-call %s (target %q): the expansion has shape %s, the call declares %v",
			call.Name, cc.Target, got, call.Shape)
	}
	return b.BuildComputation(root)
}

// CustomCall adds a custom-call of the given target and declared result shape;
// attrs may be nil (only the target is then set), called holds its
// called_computations.
func (b *Builder) CustomCall(target string, operands []*Instruction, shape Shape, attrs *CustomCallAttrs, called ...*Computation) *Instruction {
	cc := &CustomCallAttrs{}
	if attrs != nil {
		cc = attrs.clone()
	}
	cc.Target = target
	s := shape.Clone()
	return b.emit(opSpec{op: OpCustomCall, operands: operands, attrs: Attributes{CustomCall: cc},
		called: called, result: func([]Shape) Shape { return s }})
}

// ParseBackendConfig reads a backend_config: a JSON object, or an MLIR attribute
// dictionary as typed-FFI calls print it ({k = 4 : i64, largest = true}). Values
// are int64, float64, bool or string (JSON's nested values are kept as decoded; an
// MLIR value of another form is kept as its text). An empty config is an empty map.
func ParseBackendConfig(text string) (map[string]any, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return map[string]any{}, nil
	}
	// JSON as XLA prints it ({"k":3}), or as a frontend wrote it ({ "k": 3 }).
	if body := strings.TrimSpace(strings.TrimPrefix(text, "{")); strings.HasPrefix(body, `"`) || body == "}" {
		var m map[string]any
		if err := json.Unmarshal([]byte(text), &m); err == nil {
			return m, nil
		} else if body != "}" {
			return nil, fmt.Errorf("malformed JSON: %v", err)
		}
	}
	if !strings.HasPrefix(text, "{") || !strings.HasSuffix(text, "}") {
		return nil, fmt.Errorf("want a JSON object or an MLIR attribute dictionary {name = value, …}, found %q", text)
	}
	return parseMLIRDict(text[1 : len(text)-1])
}

// parseMLIRDict reads "name = value [: type], …" entries (the braces removed).
func parseMLIRDict(body string) (map[string]any, error) {
	m := map[string]any{}
	for _, entry := range splitTopLevel(body) {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, value, ok := strings.Cut(entry, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("MLIR dictionary entry %q is not name = value", entry)
		}
		m[name] = mlirValue(strings.TrimSpace(value))
	}
	return m, nil
}

// splitTopLevel splits at commas outside brackets and strings.
func splitTopLevel(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			i = scanString(s, i) - 1
		case '{', '[', '(', '<':
			depth++
		case '}', ']', ')', '>':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// mlirValue reads 4 : i64, 1.5 : f32, true, "text"; anything else (arrays,
// dense attributes, …) stays text.
func mlirValue(v string) any {
	if num, _, typed := strings.Cut(v, ":"); typed && !strings.HasPrefix(v, `"`) {
		num = strings.TrimSpace(num)
		if i, err := strconv.ParseInt(num, 10, 64); err == nil {
			return i
		}
		if f, err := strconv.ParseFloat(num, 64); err == nil {
			return f
		}
		return v
	}
	if i, err := strconv.ParseInt(v, 10, 64); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f
	}
	if v == "true" || v == "false" {
		return v == "true"
	}
	if s, err := strconv.Unquote(v); err == nil {
		return s
	}
	return v
}

// BackendConfigMap reads the call's backend_config (see ParseBackendConfig).
func (c *CustomCallAttrs) BackendConfigMap() (map[string]any, error) {
	if c == nil {
		return map[string]any{}, nil
	}
	return ParseBackendConfig(c.BackendConfig)
}
