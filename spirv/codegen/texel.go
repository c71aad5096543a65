package codegen

import (
	"fmt"
	"math"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// Texel reads. On llvmpipe (lavapipe) a storage-buffer load at a per-invocation
// offset is a loop over the SIMD lanes with a branch per lane and component, while
// a fetch from a uniform texel buffer is one branch-free gather; so kernels read
// inputs four elements at a time through a texel buffer viewing the same memory
// where the target allows (the GEMM, the convolutions, elementwise reads of inputs
// not written in place: docs/codegen.md, "Texel reads"). The input stays bound as a
// storage buffer too; the texel buffers take the bindings after the storage
// buffers (Kernel.Texels).

// texelView is one texel buffer of a kernel: a view of one input.
type texelView struct {
	buf    spirv.TexelBuffer
	arg    int // the index of the input's argument in the kernel's arguments
	format TexelFormat
	dt     hlo.DType // the input's element type
}

// texelInput is input n, holding dt (f32, f16 or bf16) in vec4 groups, as a uniform
// texel buffer of four elements per texel; ok is false where none is allowed
// (texelViewOf). Integer formats: a fetch returns the stored bits exactly (a float
// format's may flush denormals on some devices); f32 is bitcast back.
func (k *kernel) texelInput(n int, dt hlo.DType) (texelView, bool) {
	switch {
	case dt == hlo.F32:
		return k.texelViewOf(n, dt, TexelRGBA32U)
	case isNarrowFloat(dt):
		return k.texelViewOf(n, dt, TexelRGBA16U)
	}
	return texelView{}, false
}

// scalarTexels is input n, holding dt, as a uniform texel buffer of one element
// per texel, for element-by-element reads: 32- and 16-bit types (a fetch is a
// gather; a storage-buffer load of one element a loop over the SIMD lanes, 2.2×
// slower in a 27-read kernel: docs/results.md, "Session 6").
func (k *kernel) scalarTexels(n int, dt hlo.DType) (texelView, bool) {
	switch dt.Size() {
	case 4:
		return k.texelViewOf(n, dt, TexelR32U)
	case 2:
		return k.texelViewOf(n, dt, TexelR16U)
	}
	return texelView{}, false
}

// texelViewOf is input n (holding dt) viewed in format, declared once per kernel and
// format; ok is false where the target has no texel buffers or no more of them, or
// the input is not reached through one binding or has more texels than one view
// may cover. Then the caller reads it through its storage buffer.
func (k *kernel) texelViewOf(n int, dt hlo.DType, format TexelFormat) (texelView, bool) {
	for _, t := range k.texels {
		if t.arg == n && t.format == format {
			return t, true
		}
	}
	if !k.texelsAllowed(n, format) {
		return texelView{}, false
	}
	t := texelView{buf: k.m.UniformTexelBuffer(fmt.Sprintf("in%d_%s", n, format), 0, k.m.TypeU32()), arg: n, format: format, dt: dt}
	k.texels = append(k.texels, t)
	return t, true
}

// texelsAllowed: the target reads texel buffers and has room for one more, and
// argument n (an input, so its index among the arguments is n) is bound whole with
// a size in whole texels that one view may cover.
func (k *kernel) texelsAllowed(n int, format TexelFormat) bool {
	t := k.t
	if t.MaxTexelBufferElements <= 0 || len(k.texels) >= t.MaxTexelBuffers || k.argBytes == nil ||
		n >= len(k.layout) || k.layout[n].Path != PathBinding {
		return false
	}
	bytes := k.argBytes(k.args[n])
	return bytes > 0 && bytes%format.Bytes() == 0 && bytes/format.Bytes() <= min(t.MaxTexelBufferElements, math.MaxInt32)
}

// fetch is texel i of a view: a u32 vec4.
func (k *kernel) fetch(t texelView, i spirv.ID) spirv.ID {
	if i32 := k.m.TypeI32(); k.idxT != i32 { // texel coordinates are 32-bit; views hold < 2^31 texels
		i = k.f.Convert(i32, i)
	}
	return k.f.Fetch(t.buf, i)
}

// fetchElem is element i of a one-element-per-texel view as a register value of
// its dtype (the storage value the texel holds, then fromStore).
func (k *kernel) fetchElem(t texelView, i spirv.ID) spirv.ID {
	f, st := k.f, k.storeType(t.dt)
	v := f.CompositeExtract(k.fetch(t, i), 0)
	if k.m.IsFloat(st) {
		v = f.Bitcast(st, v)
	} else {
		v = f.Convert(st, v)
	}
	return k.fromStore(v, t.dt)
}

// fetchVec4 is vec4 group i of a texel input, widened to f32.
func (k *kernel) fetchVec4(t texelView, i spirv.ID) spirv.ID {
	v := k.fetch(t, i)
	if t.format == TexelRGBA32U {
		return k.f.Bitcast(k.m.TypeVector(k.m.TypeF32(), 4), v)
	}
	return k.widenVec4(v, t.dt)
}

// bindTexels numbers the texel buffers after the storage buffers, now that the
// kernel has declared all of those, and lists them for the runtime.
func (k *kernel) bindTexels() []Texel {
	var out []Texel
	for i, t := range k.texels {
		k.m.Decorate(t.buf.Var, spirv.DecorationBinding, uint32(k.bindings+i))
		out = append(out, Texel{Arg: t.arg, Format: t.format})
	}
	return out
}

// vec4Source is where a kernel reads the vec4 groups of an input: its texel buffer
// (texel non-nil), else the vec4 view of its storage buffer.
type vec4Source struct {
	buf   spirv.Buffer
	texel *texelView
}

// vec4Source is input n of kernel k, holding dt, as a vec4 source: its texel
// buffer where one is allowed (never for an input written in place), else its
// vec4 view.
func (l *lowering) vec4Source(k *kernel, n int, dt hlo.DType) vec4Source {
	if !l.writtenInPlace(n) {
		if t, ok := k.texelInput(n, dt); ok {
			return vec4Source{texel: &t}
		}
	}
	return vec4Source{buf: k.vec4Input(n, dt)}
}

// loadVec4 is vec4 group i of a source as 4 f32 register values.
func (k *kernel) loadVec4(s vec4Source, i spirv.ID) spirv.ID {
	if s.texel != nil {
		return k.fetchVec4(*s.texel, i)
	}
	return k.loadVec4Buffer(s.buf, i)
}
