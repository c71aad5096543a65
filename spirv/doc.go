// Package spirv builds SPIR-V modules for Vulkan compute kernels.
//
// A Module hands out ids, de-duplicates types and constants, adds the
// capabilities and extensions its contents imply, and assembles the binary
// with its sections in the order the specification requires. A Function
// appends instructions to the current block; structured control flow is
// written with callbacks (If, For, While) that create the header, merge and
// continue blocks and their merge instructions, so an emitter never handles
// labels itself.
//
// Errors are sticky: a misuse (a non-type where a type is needed, an
// instruction after a terminator) records the first error, later calls
// return 0, and Assemble reports it. Emission code can therefore be written
// without an error check on every line.
//
// Opcode, enum and GLSL.std.450 tables are generated from the Khronos grammar
// (see opcodes_gen.go and internal/gen). The cgo wrapper over SPIRV-Tools
// (validate, disassemble, assemble, optimise) lives in the tools subpackage.
package spirv
