// Package codegen lowers kernel computations to SPIR-V compute kernels.
//
// The unit of code generation is a kernel computation: an hlo.Computation whose
// parameters are the kernel's inputs and whose root is its output (or a tuple of
// outputs, for multi-output kernels). An unfused op is simply a kernel computation of
// one op; fusion passes produce larger ones. Lower turns one kernel computation into a
// Program: the compute kernels to dispatch, in order, and the arguments each binds.
// Control flow (while, conditional, call) is driven by the host and never reaches
// codegen; called scalar computations (reducers, comparators) are inlined.
//
// The package is pure Go: target facts come in as a Target, filled by the root
// package from the device's capabilities, so code generation builds and tests without
// Vulkan.
package codegen

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// Target is what code generation needs to know about the device.
type Target struct {
	// SubgroupSize is the device's default subgroup size, for reports only: code
	// generation relies on no fixed size (subgroup reductions read NumSubgroups
	// and SubgroupId and size their shared arrays by the workgroup), so kernels
	// are correct on devices whose size varies within a range (AMD 32..64, Intel
	// 8..32).
	SubgroupSize            uint32
	SubgroupArithmetic      bool // OpGroupNonUniform arithmetic in compute shaders
	MaxSharedMemory         uint32
	MaxWorkgroupInvocations uint32
	MaxWorkgroupSize        [3]uint32
	MaxWorkgroupCount       [3]uint32
	MaxStorageBufferRange   int64
	// Arithmetic types beyond 32-bit int/float.
	Float16, Float64, Int8, Int16, Int64 bool
	// Storage of 8- and 16-bit types in storage buffers.
	StorageBuffer8Bit, StorageBuffer16Bit bool
	// SignedZeroInfNanPreserve: the float widths at which the device honours the
	// SignedZeroInfNanPreserve execution mode (Vulkan's float-controls properties).
	// Kernels declare it at those widths, so that the driver keeps the sign of
	// zero (it may not fold +0 + x into x, which would turn cpuref's +0 sum of
	// -0 products into -0); elsewhere that sign may differ (docs/codegen.md).
	SignedZeroInfNanPreserve FloatWidths
	// MaxLoopIterations bounds the loop iterations one invocation may run, all
	// loops together, or 0 for no bound. lavapipe's loop limiter silently ends an
	// invocation's loops after 65535 iterations in total; code generation picks
	// strategies that stay below the bound and refuses kernels that cannot.
	MaxLoopIterations int64
	// GemmBlock is the rows × columns (a multiple of 4) of the output each
	// invocation of the tiled f32 GEMM computes; zero picks 16×8, the blocking
	// measured fastest on lavapipe (docs/results.md).
	GemmBlock [2]uint32
}

// FloatWidths says, per float width, whether a float control holds.
type FloatWidths struct{ F16, F32, F64 bool }

// LavapipeTarget is the target facts of Mesa lavapipe 22.3 (the CI device); tests
// that need no device use it.
func LavapipeTarget() Target {
	return Target{
		SubgroupSize: 8, SubgroupArithmetic: true,
		MaxSharedMemory: 32 << 10, MaxWorkgroupInvocations: 1024,
		MaxWorkgroupSize:      [3]uint32{1024, 1024, 1024},
		MaxWorkgroupCount:     [3]uint32{65535, 65535, 65535},
		MaxStorageBufferRange: 128 << 20,
		Float16:               true, Float64: true, Int8: true, Int16: true, Int64: true,
		StorageBuffer8Bit: true, StorageBuffer16Bit: true,
		MaxLoopIterations:        65535,
		SignedZeroInfNanPreserve: FloatWidths{F16: true, F32: true, F64: true},
	}
}

// ArgKind says where a kernel binding's buffer comes from.
type ArgKind uint8

// The argument kinds.
const (
	ArgInput   ArgKind = iota // the program's input (computation parameter) Index
	ArgOutput                 // the program's output Index (flattened root tuple)
	ArgScratch                // the program's scratch buffer Index
)

// Arg is one binding of a dispatch.
type Arg struct {
	Kind  ArgKind
	Index int
}

// String names the argument: in0, out1, scratch0.
func (a Arg) String() string {
	return fmt.Sprintf("%s%d", [...]string{"in", "out", "scratch"}[a.Kind], a.Index)
}

// Kernel is one SPIR-V compute kernel. Its storage buffers are bindings 0..Bindings-1
// of descriptor set 0, each a runtime array of its element type.
type Kernel struct {
	Name             string
	SPIRV            []byte
	EntryPoint       string
	LocalSize        [3]uint32
	Bindings         int
	PushConstantSize int
}

// Dispatch is one kernel launch: binding i is bound to Args[i]; Groups is the grid.
// Dispatches of a program run in order, with a full barrier between consecutive ones.
type Dispatch struct {
	Kernel *Kernel
	Args   []Arg
	Groups [3]uint32
	Push   []byte
	// CopiesInPlaceInput marks a dispatch that only copies the program's InPlace
	// input to output 0, element by element: the runtime skips it when the output
	// shares the input's buffer (a scatter's or dynamic-update-slice's operand), so
	// only the updates are written.
	CopiesInPlaceInput bool
}

// Program is the lowering of one kernel computation.
type Program struct {
	Name    string
	Inputs  []hlo.Shape // the computation's parameter shapes
	Outputs []hlo.Shape // the root's shape, or its tuple elements
	// Scratch lists the byte sizes of temporary buffers the dispatches share; they
	// are dead after the program and need no initial value.
	Scratch    []int64
	Dispatches []Dispatch
	// InPlace marks, per input, that the program reads it only at the element
	// index each output is written at, by the invocation that writes it and
	// before it does, over all its dispatches (elementwise access; a scatter's
	// operand, copied to the output before the updates): an output of the same
	// element size and count may then share the input's buffer when nothing reads
	// the input afterwards. Nil when no input qualifies.
	InPlace []bool
}
