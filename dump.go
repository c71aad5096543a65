package vkxla

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// dumper writes a module's stages and kernels under VKXLA_DUMP (or WithDumpDir):
// dir/<module>/00-input.hlo, 01-<index>-<pass>.hlo after every pass that changed the
// module, 05-kernels.hlo (every kernel computation and the
// dispatches it became), kernels/<name>.spv and .spvasm, and 10-plan.txt (the memory
// plan).
// Dumping is for debugging: a write failure is reported on stderr and never fails
// the compilation.
type dumper struct {
	dir string // "" when dumping is off
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func (rt *Runtime) newDumper(module string) dumper {
	if rt.dumpDir == "" {
		return dumper{}
	}
	return dumper{dir: filepath.Join(rt.dumpDir, unsafeName.ReplaceAllString(module, "_"))}
}

// on reports whether dumping is on.
func (d dumper) on() bool { return d.dir != "" }

// write dumps the text that text returns; it is called only when dumping is on, so
// printing stays off the compile path otherwise.
func (d dumper) write(name string, text func() string) {
	if d.on() {
		d.writeBytes(name, []byte(text()))
	}
}

func (d dumper) writeBytes(name string, data []byte) {
	if !d.on() {
		return
	}
	path := filepath.Join(d.dir, name)
	err := os.MkdirAll(filepath.Dir(path), 0o755)
	if err == nil {
		err = os.WriteFile(path, data, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "vkxla: VKXLA_DUMP: %v\n", err)
	}
}

// writeKernels dumps every generated kernel as SPIR-V and its disassembly.
func (d dumper) writeKernels(set *kernelSet) {
	if !d.on() {
		return
	}
	for i, ref := range set.all {
		k := ref.kernel
		base := fmt.Sprintf("kernels/%03d-%s", i, unsafeName.ReplaceAllString(k.Name, "_"))
		d.writeBytes(base+".spv", k.SPIRV)
		text, err := disassemble(k.SPIRV)
		if err != nil {
			text = "disassembly failed: " + err.Error()
		}
		d.writeBytes(base+".spvasm", []byte(text))
	}
}
