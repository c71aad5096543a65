// Command gen writes spirv/opcodes_gen.go from the Khronos SPIR-V grammar: the
// opcodes with their operand lists, every enumerated operand kind, and the
// GLSL.std.450 extended instruction numbers.
//
// It runs through `go generate` in package spirv:
//
//	go run ./internal/gen [-core path] [-glsl path] [-out opcodes_gen.go]
package main

import (
	"flag"
	"fmt"
	"os"
)

const (
	defaultCore = "/usr/include/spirv/unified1/spirv.core.grammar.json"
	defaultGLSL = "/usr/include/spirv/unified1/extinst.glsl.std.450.grammar.json"
)

func main() {
	core := flag.String("core", defaultCore, "path of spirv.core.grammar.json")
	glsl := flag.String("glsl", defaultGLSL, "path of extinst.glsl.std.450.grammar.json")
	out := flag.String("out", "opcodes_gen.go", "file to write")
	flag.Parse()
	if err := run(*core, *glsl, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(corePath, glslPath, outPath string) error {
	src, err := Generate(corePath, glslPath)
	if err != nil {
		return err
	}
	return os.WriteFile(outPath, src, 0o644)
}
