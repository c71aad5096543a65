// Package tools wraps SPIRV-Tools, linked statically: Validate, Disassemble,
// Assemble and Optimize (the performance passes, through a small C++ shim
// because the library's optimizer has no C API in version 2023.1).
//
// Only plain word slices cross into C; nothing C allocates outlives a call.
package tools

/*
#cgo CXXFLAGS: -std=c++17 -O2
#cgo LDFLAGS: -l:libSPIRV-Tools-opt.a -l:libSPIRV-Tools.a -lstdc++ -lm
#include <stdlib.h>
#include <spirv-tools/libspirv.h>
#include "shim.h"

// validate builds the binary descriptor on the C side, so that Go passes only
// a pointer to plain words (a Go struct holding a Go pointer may not be
// passed to C).
static spv_result_t validate(spv_const_context ctx, spv_validator_options opts,
                             const uint32_t* words, size_t count, spv_diagnostic* diag) {
	spv_const_binary_t bin = {words, count};
	return spvValidateWithOptions(ctx, opts, &bin, diag);
}
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/vkxla/vkxla/spirv"
)

// TargetEnv is the Vulkan environment a module is checked against.
type TargetEnv int

// Target environments and the newest SPIR-V each consumes.
const (
	Vulkan1_1         TargetEnv = iota // SPIR-V up to 1.3
	Vulkan1_1SPIRV1_4                  // Vulkan 1.1 with VK_KHR_spirv_1_4: up to 1.4
	Vulkan1_2                          // up to 1.5
	Vulkan1_3                          // up to 1.6
)

var envs = [...]struct {
	c       C.spv_target_env
	name    string
	version spirv.Version
}{
	Vulkan1_1:         {C.SPV_ENV_VULKAN_1_1, "Vulkan 1.1", spirv.Version1_3},
	Vulkan1_1SPIRV1_4: {C.SPV_ENV_VULKAN_1_1_SPIRV_1_4, "Vulkan 1.1 + SPIR-V 1.4", spirv.Version1_4},
	Vulkan1_2:         {C.SPV_ENV_VULKAN_1_2, "Vulkan 1.2", spirv.Version1_5},
	Vulkan1_3:         {C.SPV_ENV_VULKAN_1_3, "Vulkan 1.3", spirv.Version1_6},
}

func (e TargetEnv) valid() bool { return e >= 0 && int(e) < len(envs) }

func (e TargetEnv) String() string {
	if !e.valid() {
		return fmt.Sprintf("TargetEnv(%d)", int(e))
	}
	return envs[e].name
}

// MaxVersion is the newest SPIR-V version the environment consumes.
func (e TargetEnv) MaxVersion() spirv.Version {
	if !e.valid() {
		return 0
	}
	return envs[e].version
}

// contexts holds one spv_context per environment. A context is immutable
// after creation, and every call here passes its own diagnostic, so sharing
// one across goroutines is safe; creating it costs more than a small
// validation, hence the cache.
var contexts [len(envs)]struct {
	once sync.Once
	ctx  C.spv_const_context
}

func context(e TargetEnv) (C.spv_const_context, error) {
	if !e.valid() {
		return nil, fmt.Errorf("spirv/tools: unknown target environment %d", int(e))
	}
	c := &contexts[e]
	c.once.Do(func() { c.ctx = C.spv_const_context(C.spvContextCreate(envs[e].c)) })
	return c.ctx, nil
}

// universal is the context for disassembly, which should print any version.
var universal struct {
	once sync.Once
	ctx  C.spv_const_context
}

func universalContext() C.spv_const_context {
	universal.once.Do(func() { universal.ctx = C.spv_const_context(C.spvContextCreate(C.SPV_ENV_UNIVERSAL_1_6)) })
	return universal.ctx
}

// Option relaxes the layout rules Validate and Optimize check, for devices
// that enable the matching Vulkan features.
type Option func(C.spv_validator_options)

// RelaxBlockLayout accepts VK_KHR_relaxed_block_layout offsets.
func RelaxBlockLayout() Option {
	return func(o C.spv_validator_options) { C.spvValidatorOptionsSetRelaxBlockLayout(o, true) }
}

// ScalarBlockLayout accepts VK_EXT_scalar_block_layout (scalar alignment).
func ScalarBlockLayout() Option {
	return func(o C.spv_validator_options) { C.spvValidatorOptionsSetScalarBlockLayout(o, true) }
}

// validatorOptions builds the C options; the caller destroys them.
func validatorOptions(opts []Option) C.spv_validator_options {
	o := C.spvValidatorOptionsCreate()
	for _, opt := range opts {
		opt(o)
	}
	return o
}

// Error is a SPIRV-Tools diagnostic: what failed, the message (which names
// the offending instruction) and the word index it points at.
type Error struct {
	Op        string // "validate", "disassemble", "assemble", "optimize"
	Env       string
	Message   string
	WordIndex int // 0 when the tool gave no position
}

func (e *Error) Error() string {
	s := fmt.Sprintf("spirv %s (%s): %s", e.Op, e.Env, e.Message)
	if e.WordIndex > 0 {
		s += fmt.Sprintf(" [word %d]", e.WordIndex)
	}
	return s
}

// diagnosticError converts and frees a C diagnostic.
func diagnosticError(op, env string, result C.spv_result_t, d C.spv_diagnostic) error {
	defer C.spvDiagnosticDestroy(d)
	e := &Error{Op: op, Env: env, Message: fmt.Sprintf("spv_result_t %d", int(result))}
	if d != nil {
		e.Message = strings.TrimSpace(C.GoString(d.error))
		if d.isTextSource {
			e.Message = fmt.Sprintf("line %d column %d: %s", d.position.line+1, d.position.column+1, e.Message)
		} else {
			e.WordIndex = int(d.position.index)
		}
	}
	return e
}

func wordsPtr(words []uint32) (*C.uint32_t, C.size_t) {
	if len(words) == 0 {
		return nil, 0
	}
	return (*C.uint32_t)(unsafe.Pointer(&words[0])), C.size_t(len(words))
}

// Validate checks a module against the SPIR-V rules of its header's version
// and the Vulkan rules of env.
func Validate(words []uint32, env TargetEnv, opts ...Option) error {
	ctx, err := context(env)
	if err != nil {
		return err
	}
	o := validatorOptions(opts)
	defer C.spvValidatorOptionsDestroy(o)
	p, n := wordsPtr(words)
	var d C.spv_diagnostic
	if r := C.validate(ctx, o, p, n, &d); r != C.SPV_SUCCESS {
		return diagnosticError("validate", env.String(), r, d)
	}
	return nil
}

// DisassembleFlag adds detail to Disassemble's plain output.
type DisassembleFlag uint32

// Disassemble flags. Without them the text has friendly names, no header and
// no indentation: stable enough for golden files.
const (
	Header   DisassembleFlag = 1 << iota // the "; SPIR-V" comment block with version and bound
	Indent                               // align opcodes in a column
	Comments                             // annotate with decorations and types
)

func disassembleOptions(flags []DisassembleFlag) C.uint32_t {
	options := C.uint32_t(C.SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | C.SPV_BINARY_TO_TEXT_OPTION_NO_HEADER)
	for _, f := range flags {
		if f&Header != 0 {
			options &^= C.SPV_BINARY_TO_TEXT_OPTION_NO_HEADER
		}
		if f&Indent != 0 {
			options |= C.SPV_BINARY_TO_TEXT_OPTION_INDENT
		}
		if f&Comments != 0 {
			options |= C.SPV_BINARY_TO_TEXT_OPTION_COMMENT
		}
	}
	return options
}

// Disassemble returns the SPIR-V assembly text of a module.
func Disassemble(words []uint32, flags ...DisassembleFlag) (string, error) {
	p, n := wordsPtr(words)
	var text C.spv_text
	var d C.spv_diagnostic
	if r := C.spvBinaryToText(universalContext(), p, n, disassembleOptions(flags), &text, &d); r != C.SPV_SUCCESS {
		return "", diagnosticError("disassemble", "universal", r, d)
	}
	defer C.spvTextDestroy(text)
	return C.GoStringN(text.str, C.int(text.length)), nil
}

// Assemble turns SPIR-V assembly into a binary whose header carries env's
// newest SPIR-V version. It is handy for tests and hand-written fragments.
func Assemble(text string, env TargetEnv) ([]uint32, error) {
	ctx, err := context(env)
	if err != nil {
		return nil, err
	}
	cText := C.CString(text)
	defer C.free(unsafe.Pointer(cText))
	var bin C.spv_binary
	var d C.spv_diagnostic
	if r := C.spvTextToBinary(ctx, cText, C.size_t(len(text)), &bin, &d); r != C.SPV_SUCCESS {
		return nil, diagnosticError("assemble", env.String(), r, d)
	}
	defer C.spvBinaryDestroy(bin)
	return copyWords(bin.code, bin.wordCount), nil
}

// Optimize runs SPIRV-Tools' performance passes (the -O recipe: inlining,
// mem2reg, constant propagation, dead code elimination, CFG cleanup, ...)
// after validating the input for env. Descriptor bindings and specialization
// constants are preserved even when unused, so the kernel's interface stays
// the one the emitter declared.
func Optimize(words []uint32, env TargetEnv, opts ...Option) ([]uint32, error) {
	if !env.valid() {
		return nil, fmt.Errorf("spirv/tools: unknown target environment %d", int(env))
	}
	o := validatorOptions(opts)
	defer C.spvValidatorOptionsDestroy(o)
	p, n := wordsPtr(words)
	var out *C.uint32_t
	var outCount C.size_t
	var msg *C.char
	if C.vkxla_optimize(envs[env].c, o, p, n, &out, &outCount, &msg) == 0 {
		defer C.free(unsafe.Pointer(msg))
		return nil, &Error{Op: "optimize", Env: env.String(), Message: C.GoString(msg)}
	}
	defer C.free(unsafe.Pointer(out))
	return copyWords(out, outCount), nil
}

func copyWords(p *C.uint32_t, n C.size_t) []uint32 {
	if n == 0 {
		return nil
	}
	return append([]uint32(nil), unsafe.Slice((*uint32)(unsafe.Pointer(p)), int(n))...)
}
