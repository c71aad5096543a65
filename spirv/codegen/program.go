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
	// MaxStorageBuffers is the most storage-buffer bindings one kernel may declare
	// (maxPerStageDescriptorStorageBuffers); 0: no bound.
	MaxStorageBuffers int
	// BufferDeviceAddress: kernels may reach buffers through device addresses
	// (PhysicalStorageBuffer64; needs Int64 too). Buffers larger than
	// MaxStorageBufferRange are then read by address; without it they are split
	// across bindings (Path).
	BufferDeviceAddress bool
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
	// MaxTexelBufferElements is the most texels one uniform texel buffer may view
	// (maxTexelBufferElements), or 0 where kernels must not read through texel
	// buffers; MaxTexelBuffers bounds the texel buffers one kernel declares
	// (maxPerStageDescriptorSampledImages, which counts them). Kernels whose reads
	// repeat per output (the depthwise convolution) read their inputs through
	// texel buffers where these allow (Kernel.Texels).
	MaxTexelBufferElements int64
	MaxTexelBuffers        int
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
		MaxStorageBufferRange: 128 << 20, MaxStorageBuffers: 32, BufferDeviceAddress: true,
		Float16: true, Float64: true, Int8: true, Int16: true, Int64: true,
		StorageBuffer8Bit: true, StorageBuffer16Bit: true,
		MaxLoopIterations:        65535,
		SignedZeroInfNanPreserve: FloatWidths{F16: true, F32: true, F64: true},
		MaxTexelBufferElements:   1 << 27, MaxTexelBuffers: 128,
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
	// Layout says how the kernel reaches each argument of its dispatch (the
	// dispatch's Args, in order).
	Layout []ArgBinding
	// AddressTable is the binding of the table of device addresses (one u64 per
	// argument reached by address, at its Slot), or -1 when there is none.
	AddressTable int
	// Texels are the kernel's uniform texel buffers, read-only, at bindings
	// Bindings, Bindings+1, … (after the storage buffers): each views the whole
	// range of one of the dispatch's arguments (which is also bound as a storage
	// buffer) in a format.
	Texels []Texel
}

// Texel is a uniform texel buffer of a kernel: a view of argument Arg (an index
// into the dispatch's Args) as texels of Format.
type Texel struct {
	Arg    int
	Format TexelFormat
}

// TexelFormat is the format of a texel buffer's view.
type TexelFormat uint8

// The texel formats kernels read, all integer so that a fetch returns the stored
// bits exactly: four u32 (the bits of a vec4 of an f32 tensor), four u16 (the bits
// of a vec4 of f16 or bf16, widened in registers), and one element of a 32- or
// 16-bit type (element-by-element reads).
const (
	TexelRGBA32U TexelFormat = iota // VK_FORMAT_R32G32B32A32_UINT
	TexelRGBA16U                    // VK_FORMAT_R16G16B16A16_UINT
	TexelR32U                       // VK_FORMAT_R32_UINT: one 32-bit element per texel
	TexelR16U                       // VK_FORMAT_R16_UINT: one 16-bit element per texel
)

// Bytes is the size of one texel.
func (f TexelFormat) Bytes() int64 { return [...]int64{16, 8, 4, 2}[f] }

func (f TexelFormat) String() string { return [...]string{"rgba32ui", "rgba16ui", "r32ui", "r16ui"}[f] }

// Path is how a kernel reaches a buffer.
type Path uint8

const (
	// PathBinding: one descriptor binding covers the buffer.
	PathBinding Path = iota
	// PathSplit: consecutive bindings, each of Target.SplitBytes but the last,
	// cover the buffer; an access picks its binding by element index.
	PathSplit
	// PathAddress: the kernel reads the buffer's device address from its address
	// table and accesses it through a PhysicalStorageBuffer64 pointer.
	PathAddress
)

func (p Path) String() string { return [...]string{"binding", "split", "address"}[p] }

// ArgBinding is how a kernel reaches one argument: Pieces bindings from Binding
// (PathBinding: one; PathSplit: the pieces in order), or the address at Slot of
// the address table (PathAddress).
type ArgBinding struct {
	Path    Path
	Binding int
	Pieces  int
	Slot    int
}

// SplitGranule divides the size of every piece of a split buffer: every element
// and vec4 lies in one piece, and every piece starts at an offset aligned for any
// device (Vulkan's minStorageBufferOffsetAlignment is at most 256). The runtime's
// arena splits ranges with it (arena.Bindings(r, SplitGranule)), which gives pieces
// of SplitBytes.
const SplitGranule = 256

// SplitBytes is the size of every piece but the last of a split buffer: the
// largest multiple of SplitGranule one binding may cover.
func (t Target) SplitBytes() int64 { return t.MaxStorageBufferRange / SplitGranule * SplitGranule }

// Path is how kernels on t reach a buffer of the given size: one binding while
// one binding may cover it, else by device address where t has them (and Int64
// for the addresses), else split across bindings. The planner marks each buffer
// of the plan with the same rule (plan ranges' Split and Addressed).
func (t Target) Path(bytes int64) Path {
	switch {
	case t.MaxStorageBufferRange <= 0 || bytes <= t.MaxStorageBufferRange:
		return PathBinding
	case t.BufferDeviceAddress && t.Int64:
		return PathAddress
	}
	return PathSplit
}

// Bindings is how many descriptor bindings kernels on t take for a buffer of the
// given size, by its Path: one, one per piece of SplitBytes, or none (an address
// reaches it, through the kernel's one address table). Fusion bounds a kernel's
// bindings with it (passes.Config.Bindings).
func (t Target) Bindings(bytes int64) int {
	switch t.Path(bytes) {
	case PathAddress:
		return 0
	case PathSplit:
		if chunk := t.SplitBytes(); chunk > 0 {
			return int((bytes + chunk - 1) / chunk)
		}
	}
	return 1
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
