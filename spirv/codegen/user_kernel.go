package codegen

import (
	"errors"
	"fmt"
	"slices"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// User-supplied SPIR-V kernels (hlo.SPIRVKernel): a custom-call of a kernel target
// is one dispatch of the user's module, its operands then its results bound as
// storage buffers 0, 1, … of set 0. Before dispatching, the module is read for
// what the call must match — the entry point, the storage buffers and their element
// types, a push-constant block — and a mismatch is an error naming the target and
// the instruction. SPIRV-Tools validates the module with the generated kernels.

// lowerUserKernel dispatches the target's kernel once over the call's buffers.
func (l *lowering) lowerUserKernel() error {
	d, err := l.userDispatch()
	if err != nil {
		return err
	}
	l.p.Dispatches = append(l.p.Dispatches, d)
	return nil
}

// userDispatch checks the call against the kernel and builds its dispatch.
func (l *lowering) userDispatch() (Dispatch, error) {
	root := l.c.Root
	t, _ := hlo.KernelTarget(root)
	fail := func(err error) (Dispatch, error) {
		return Dispatch{}, fmt.Errorf("custom-call %s (kernel target %q): %w", root.Name, t.Name, err)
	}
	k := t.Kernel
	info, err := readUserKernel(k.Words, k.EntryPoint)
	if err != nil {
		return fail(err)
	}
	if err := info.match(l.p.Inputs, l.p.Outputs); err != nil {
		return fail(err)
	}
	groups, err := k.Groups(root)
	if err != nil {
		return fail(fmt.Errorf("workgroup count: %w", err))
	}
	for i, g := range groups {
		if m := l.t.MaxWorkgroupCount[i]; m > 0 && g > m {
			return fail(fmt.Errorf("workgroup count %v exceeds the device's maximum %v in dimension %d", groups, l.t.MaxWorkgroupCount, i))
		}
	}
	var push []byte
	if k.Push != nil {
		if push, err = k.Push(root); err != nil {
			return fail(fmt.Errorf("push constants: %w", err))
		}
	}
	if err := info.matchPush(push); err != nil {
		return fail(err)
	}
	d := Dispatch{Groups: groups, Push: push, Kernel: &Kernel{Name: l.c.Name, SPIRV: spirv.Bytes(k.Words), EntryPoint: k.EntryPoint,
		LocalSize: info.local, Bindings: len(info.buffers), PushConstantSize: len(push)}}
	for i := range l.p.Inputs {
		d.Args = append(d.Args, Arg{Kind: ArgInput, Index: i})
	}
	d.Args = append(d.Args, l.outputArgs()...)
	// A user's kernel binds each argument whole, at binding i: it knows no split
	// bindings or device addresses (docs/custom-calls.md).
	shapes := append(slices.Clone(l.p.Inputs), l.p.Outputs...)
	d.Kernel.AddressTable = -1
	for i, sh := range shapes {
		if size := sh.ByteSize(); l.t.Path(size) != PathBinding {
			return fail(fmt.Errorf("argument %d (%v) is %d bytes, more than one binding holds (maxStorageBufferRange %d): a user kernel binds every argument whole",
				i, sh, size, l.t.MaxStorageBufferRange))
		}
		d.Kernel.Layout = append(d.Kernel.Layout, ArgBinding{Path: PathBinding, Binding: i, Pieces: 1})
	}
	return d, nil
}

// maxPushBytes is the push-constant space every Vulkan device has.
const maxPushBytes = 128

// userKernelInfo is what a user's module declares.
type userKernelInfo struct {
	local   [3]uint32
	buffers []elemType // storage buffers of set 0, by binding
	push    bool       // declares a push-constant block
}

// elemType is a storage buffer's element: a float or integer of a width (the
// component type of a vector element).
type elemType struct {
	float bool
	width uint32
}

func (e elemType) String() string {
	if e.float {
		return fmt.Sprintf("%d-bit floats", e.width)
	}
	return fmt.Sprintf("%d-bit integers", e.width)
}

// holds reports whether a buffer of e holds elements of dt (integers of either
// signedness; pred as 8-bit integers).
func (e elemType) holds(dt hlo.DType) bool {
	return e.width == uint32(dt.Bits()) && e.float == dt.IsFloat()
}

// match checks the buffers against the call: one per operand, then one per result,
// of the right element types.
func (u *userKernelInfo) match(inputs, outputs []hlo.Shape) error {
	if n := len(inputs) + len(outputs); len(u.buffers) != n {
		return fmt.Errorf("the kernel binds %d storage buffers; the call has %d operands and %d results (bindings are operands, then results)",
			len(u.buffers), len(inputs), len(outputs))
	}
	for i, s := range append(append([]hlo.Shape{}, inputs...), outputs...) {
		if !u.buffers[i].holds(s.DType) {
			what := fmt.Sprintf("operand %d", i)
			if i >= len(inputs) {
				what = fmt.Sprintf("result %d", i-len(inputs))
			}
			return fmt.Errorf("binding %d is an array of %v, but %s is %v", i, u.buffers[i], what, s)
		}
	}
	return nil
}

func (u *userKernelInfo) matchPush(push []byte) error {
	switch {
	case len(push) > maxPushBytes || len(push)%4 != 0:
		return fmt.Errorf("%d bytes of push constants: want a multiple of 4, at most %d", len(push), maxPushBytes)
	case u.push && len(push) == 0:
		return errors.New("the kernel declares push constants but the target's Push gives none")
	case !u.push && len(push) > 0:
		return fmt.Errorf("the target's Push gives %d bytes, but the kernel declares no push constants", len(push))
	}
	return nil
}

// readUserKernel reads the module's entry point, local size, storage buffers and
// push-constant block.
func readUserKernel(words []uint32, entry string) (*userKernelInfo, error) {
	r := &moduleReader{types: map[uint32][]uint32{}, decorations: map[uint32]map[spirv.Decoration]uint32{}}
	if err := r.read(words); err != nil {
		return nil, err
	}
	fn, ok := r.entries[entry]
	if !ok {
		return nil, fmt.Errorf("the module has no GLCompute entry point %q", entry)
	}
	u := &userKernelInfo{local: r.local[fn]}
	bound := map[uint32]elemType{}
	for _, v := range r.variables {
		switch {
		case v.class == spirv.StorageClassPushConstant:
			u.push = true
			continue
		case v.class != spirv.StorageClassStorageBuffer && v.class != spirv.StorageClassUniform:
			continue
		}
		set, binding := r.decorations[v.id][spirv.DecorationDescriptorSet], r.decorations[v.id][spirv.DecorationBinding]
		if set != 0 {
			return nil, fmt.Errorf("variable %%%d is in descriptor set %d; kernels bind set 0", v.id, set)
		}
		e, err := r.bufferElem(v)
		if err != nil {
			return nil, fmt.Errorf("binding %d: %w", binding, err)
		}
		if _, dup := bound[binding]; dup {
			return nil, fmt.Errorf("binding %d is declared twice", binding)
		}
		bound[binding] = e
	}
	for b := range uint32(len(bound)) {
		e, ok := bound[b]
		if !ok {
			return nil, fmt.Errorf("the bindings are not 0..%d: binding %d is missing", len(bound)-1, b)
		}
		u.buffers = append(u.buffers, e)
	}
	return u, nil
}

// moduleReader collects the declarations readUserKernel needs.
type moduleReader struct {
	entries     map[string]uint32    // GLCompute entry point names → function ids
	local       map[uint32][3]uint32 // LocalSize by function
	types       map[uint32][]uint32  // type id → its instruction (opcode first)
	decorations map[uint32]map[spirv.Decoration]uint32
	variables   []variable
}

type variable struct {
	id, ptrType uint32
	class       spirv.StorageClass
}

func (r *moduleReader) read(words []uint32) error {
	if len(words) < 5 || words[0] != spirv.MagicNumber {
		return errors.New("not a SPIR-V module (no magic number)")
	}
	r.entries, r.local = map[string]uint32{}, map[uint32][3]uint32{}
	for i := 5; i < len(words); {
		n := int(words[i] >> 16)
		if n == 0 || i+n > len(words) {
			return fmt.Errorf("malformed instruction at word %d", i)
		}
		r.note(spirv.Op(words[i]&0xFFFF), words[i+1:i+n])
		i += n
	}
	return nil
}

// note records one instruction's operands.
func (r *moduleReader) note(op spirv.Op, w []uint32) {
	switch op {
	case spirv.OpEntryPoint:
		if len(w) >= 3 && spirv.ExecutionModel(w[0]) == spirv.ExecutionModelGLCompute {
			r.entries[literalString(w[2:])] = w[1]
		}
	case spirv.OpExecutionMode:
		if len(w) >= 5 && spirv.ExecutionMode(w[1]) == spirv.ExecutionModeLocalSize {
			r.local[w[0]] = [3]uint32{w[2], w[3], w[4]}
		}
	case spirv.OpDecorate:
		if len(w) >= 2 {
			if r.decorations[w[0]] == nil {
				r.decorations[w[0]] = map[spirv.Decoration]uint32{}
			}
			v := uint32(0)
			if len(w) >= 3 {
				v = w[2]
			}
			r.decorations[w[0]][spirv.Decoration(w[1])] = v
		}
	case spirv.OpTypeInt, spirv.OpTypeFloat, spirv.OpTypeVector, spirv.OpTypeRuntimeArray, spirv.OpTypeStruct, spirv.OpTypePointer:
		if len(w) >= 1 {
			r.types[w[0]] = append([]uint32{uint32(op)}, w[1:]...)
		}
	case spirv.OpVariable:
		if len(w) >= 3 {
			r.variables = append(r.variables, variable{id: w[1], ptrType: w[0], class: spirv.StorageClass(w[2])})
		}
	}
}

// bufferElem is the element type of a storage-buffer variable: a pointer to a
// block whose first member is a runtime array (of scalars or vectors).
func (r *moduleReader) bufferElem(v variable) (elemType, error) {
	ptr := r.types[v.ptrType]
	if len(ptr) < 3 || spirv.Op(ptr[0]) != spirv.OpTypePointer {
		return elemType{}, errors.New("the variable's type is not a pointer")
	}
	block := ptr[2]
	if _, ok := r.decorations[block][spirv.DecorationBufferBlock]; v.class == spirv.StorageClassUniform && !ok {
		return elemType{}, errors.New("is a uniform buffer; kernels bind storage buffers")
	}
	st := r.types[block]
	if len(st) < 2 || spirv.Op(st[0]) != spirv.OpTypeStruct {
		return elemType{}, errors.New("the buffer is not a block (struct)")
	}
	arr := r.types[st[1]]
	if len(arr) < 2 || spirv.Op(arr[0]) != spirv.OpTypeRuntimeArray {
		return elemType{}, errors.New("the block's first member is not a runtime array")
	}
	elem := r.types[arr[1]]
	if len(elem) >= 2 && spirv.Op(elem[0]) == spirv.OpTypeVector {
		elem = r.types[elem[1]]
	}
	switch {
	case len(elem) >= 2 && spirv.Op(elem[0]) == spirv.OpTypeFloat:
		return elemType{float: true, width: elem[1]}, nil
	case len(elem) >= 2 && spirv.Op(elem[0]) == spirv.OpTypeInt:
		return elemType{width: elem[1]}, nil
	}
	return elemType{}, errors.New("the runtime array's elements are not numbers or vectors of them")
}

// literalString decodes a nul-terminated SPIR-V string.
func literalString(w []uint32) string {
	var b []byte
	for _, x := range w {
		for i := range 4 {
			c := byte(x >> (8 * i))
			if c == 0 {
				return string(b)
			}
			b = append(b, c)
		}
	}
	return string(b)
}

// CheckKernel reads a user kernel's module as code generation will: the GLCompute
// entry point, storage buffers 0..n-1 of set 0 whose blocks hold runtime arrays of
// numbers. vkxla.RegisterKernelTarget calls it at registration.
func CheckKernel(k *hlo.SPIRVKernel) error {
	if k == nil {
		return errors.New("no kernel")
	}
	_, err := readUserKernel(k.Words, k.EntryPoint)
	return err
}
