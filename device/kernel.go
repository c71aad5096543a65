package device

/*
#include <stdlib.h>
#include "vkx.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"slices"
	"unsafe"
)

// KernelSpec describes a compute shader's interface.
type KernelSpec struct {
	EntryPoint       string   // "" means "main"
	Bindings         int      // storage buffers at set 0, bindings 0..Bindings-1
	PushConstantSize int      // bytes, a multiple of 4; every Dispatch passes exactly this many
	SpecConstants    []uint32 // value of specialisation constant_id i
	// Texels are the read-only uniform texel buffers after the storage buffers, at
	// set 0, bindings Bindings..Bindings+len(Texels)-1, with the format each is read
	// with.
	Texels []TexelFormat
}

// Kernel is a compute pipeline with its descriptor set and pipeline layouts.
type Kernel struct {
	res  resource
	c    *C.vkx_kernel
	spec KernelSpec
}

// NewKernel creates a compute pipeline from SPIR-V.
func (d *Device) NewKernel(spirv []byte, spec KernelSpec) (*Kernel, error) {
	if spec.EntryPoint == "" {
		spec.EntryPoint = "main"
	}
	words, err := d.checkKernel(spirv, spec)
	if err != nil {
		return nil, err
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.exit()
	entry := C.CString(spec.EntryPoint)
	defer C.free(unsafe.Pointer(entry))
	texels := make([]uint32, len(spec.Texels))
	for i, f := range spec.Texels {
		texels[i] = uint32(f)
	}
	var c *C.vkx_kernel
	err = check(C.vkx_kernel_create(d.c, (*C.uint32_t)(unsafe.SliceData(words)), C.size_t(4*len(words)), entry,
		C.uint32_t(spec.Bindings), (*C.uint32_t)(unsafe.SliceData(texels)), C.uint32_t(len(texels)),
		C.uint32_t(spec.PushConstantSize),
		(*C.uint32_t)(unsafe.SliceData(spec.SpecConstants)), C.uint32_t(len(spec.SpecConstants)), &c))
	if err != nil {
		return nil, fmt.Errorf("NewKernel(%s): %w", spec.EntryPoint, err)
	}
	spec.SpecConstants = append([]uint32(nil), spec.SpecConstants...)
	spec.Texels = append([]TexelFormat(nil), spec.Texels...)
	k := &Kernel{c: c, spec: spec}
	k.res.init(d, "kernel", func() {
		C.vkx_kernel_destroy(d.c, k.c)
		k.c = nil
		d.forget(k)
	})
	d.adopt(k)
	return k, nil
}

// checkKernel validates the spec against the device limits and against the interface
// the SPIR-V declares (reflect.go). Drivers may crash on malformed SPIR-V or on a
// pipeline layout the module disagrees with (the validation layer would report it, but
// only when it is on), so the module's framing, entry point, bindings, push-constant
// block and workgroup size are checked here.
func (d *Device) checkKernel(spirv []byte, spec KernelSpec) ([]uint32, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("device: NewKernel(%s): %s (%w)", spec.EntryPoint, fmt.Sprintf(format, args...), ErrInvalidArgument)
	}
	if spec.Bindings < 0 || spec.Bindings > d.caps.MaxStorageBuffersPerStage {
		return nil, fail("%d bindings; the device allows 0..%d", spec.Bindings, d.caps.MaxStorageBuffersPerStage)
	}
	if err := d.checkTexels(spec); err != nil {
		return nil, fail("%v", err)
	}
	if spec.PushConstantSize < 0 || spec.PushConstantSize%4 != 0 || spec.PushConstantSize > d.caps.MaxPushConstantsSize {
		return nil, fail("push constant size %d must be a multiple of 4 in 0..%d", spec.PushConstantSize, d.caps.MaxPushConstantsSize)
	}
	words, err := decodeSPIRV(spirv)
	if err != nil {
		return nil, fail("%v", err)
	}
	in, err := reflectWords(words, spec.EntryPoint)
	if err != nil {
		return nil, fail("%v", err)
	}
	if err := checkInterface(in, spec); err != nil {
		return nil, fail("%v", err)
	}
	if err := d.checkLocalSize(in.LocalSize); err != nil {
		return nil, fail("%v", err)
	}
	return words, nil
}

// checkLocalSize checks a literal workgroup size against the device's limits.
func (d *Device) checkLocalSize(size [3]uint32) error {
	if size == [3]uint32{} {
		return nil // set by a specialisation constant or LocalSizeId: the driver checks it
	}
	n := uint64(1)
	for i, s := range size {
		if s == 0 || s > d.caps.MaxWorkgroupSize[i] {
			return fmt.Errorf("workgroup size %v: dimension %d must be in 1..%d", size, i, d.caps.MaxWorkgroupSize[i])
		}
		n *= uint64(s)
	}
	if n > uint64(d.caps.MaxWorkgroupInvocations) {
		return fmt.Errorf("workgroup size %v: %d invocations, the device allows %d", size, n, d.caps.MaxWorkgroupInvocations)
	}
	return nil
}

// checkTexels checks the uniform texel buffers' count and formats.
func (d *Device) checkTexels(spec KernelSpec) error {
	caps := &d.caps
	if n := len(spec.Texels); n > caps.MaxSampledImagesPerStage {
		return fmt.Errorf("%d uniform texel buffers; the device allows %d (maxPerStageDescriptorSampledImages)", n, caps.MaxSampledImagesPerStage)
	}
	if n := spec.Bindings + len(spec.Texels); n > caps.MaxResourcesPerStage {
		return fmt.Errorf("%d storage and %d uniform texel buffers; the device allows %d in all (maxPerStageResources)",
			spec.Bindings, len(spec.Texels), caps.MaxResourcesPerStage)
	}
	for i, f := range spec.Texels {
		if f.Bytes() == 0 {
			return fmt.Errorf("binding %d (uniform texel buffer): unknown format %v", spec.Bindings+i, f)
		}
		if !caps.SupportsTexel(f) {
			return fmt.Errorf("binding %d (uniform texel buffer): the device cannot read %v texels (no VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT)", spec.Bindings+i, f)
		}
	}
	return nil
}

const spirvMagic = 0x07230203

func decodeSPIRV(b []byte) ([]uint32, error) {
	if len(b) < 20 || len(b)%4 != 0 {
		return nil, fmt.Errorf("not SPIR-V: %d bytes (a module is a whole number of 32-bit words, at least 5)", len(b))
	}
	words := make([]uint32, len(b)/4)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	if words[0] != spirvMagic {
		return nil, fmt.Errorf("not SPIR-V: magic number 0x%08x, want 0x%08x (little-endian)", words[0], spirvMagic)
	}
	for i := 5; i < len(words); {
		n := int(words[i] >> 16)
		if n == 0 || i+n > len(words) {
			return nil, fmt.Errorf("malformed SPIR-V: instruction at word %d has length %d", i, n)
		}
		i += n
	}
	if err := checkFunctions(words); err != nil {
		return nil, fmt.Errorf("malformed SPIR-V: %v", err)
	}
	return words, nil
}

// checkFunctions checks that the module's functions open and close in turn and that
// it ends with one closed: a module cut at an instruction boundary frames correctly
// but crashes lavapipe's compiler. (Full validation is SPIRV-Tools'; the custom-call
// path runs it.)
func checkFunctions(words []uint32) error {
	const opFunction, opFunctionEnd = 54, 56
	open, functions, last := false, 0, uint32(0)
	for i := 5; i < len(words); i += int(words[i] >> 16) {
		switch last = words[i] & 0xffff; last {
		case opFunction:
			if open {
				return fmt.Errorf("OpFunction at word %d inside another function", i)
			}
			open, functions = true, functions+1
		case opFunctionEnd:
			if !open {
				return fmt.Errorf("OpFunctionEnd at word %d outside a function", i)
			}
			open = false
		}
	}
	if functions == 0 || last != opFunctionEnd {
		return fmt.Errorf("the module does not end with a whole function (%d functions, last opcode %d; truncated?)", functions, last)
	}
	return nil
}

func literalString(words []uint32) string {
	var b []byte
	for _, w := range words {
		for j := 0; j < 4; j++ {
			c := byte(w >> (8 * j))
			if c == 0 {
				return string(b)
			}
			b = append(b, c)
		}
	}
	return string(b)
}

// Spec returns the kernel's interface. Its slices are copies: Dispatch checks
// against the kernel's own, which must keep matching its descriptor set layout.
func (k *Kernel) Spec() KernelSpec {
	s := k.spec
	s.SpecConstants = slices.Clone(s.SpecConstants)
	s.Texels = slices.Clone(s.Texels)
	return s
}

// Close frees the kernel once no submission in flight uses it. Command buffers that
// recorded it can no longer be submitted (ErrClosed). A second Close does nothing.
func (k *Kernel) Close() error {
	d := k.res.d
	if err := d.enter(); err != nil {
		return nil
	}
	defer d.exit()
	k.res.close()
	return nil
}

func (k *Kernel) kill() { k.res.kill() }
