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
// NewRuntime checks that the directory can be written (an error of the option); a
// write that fails later stops the dumping and fails the Compile, once, rather than
// leaving a partial dump the user would trust. A nil dumper dumps nothing.
type dumper struct {
	dir     string
	failure error // the first write that failed; nothing is written after it
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// dumpName makes a module or kernel name one path element inside the dump
// directory: separators and odd characters become "_", and "", "." and ".." get a
// leading "_" so they name a directory of their own, not the parent.
func dumpName(name string) string {
	s := unsafeName.ReplaceAllString(name, "_")
	if s == "" || s == "." || s == ".." {
		s = "_" + s
	}
	return s
}

func (rt *Runtime) newDumper(module string) *dumper {
	if rt.dumpDir == "" {
		return nil
	}
	return &dumper{dir: filepath.Join(rt.dumpDir, dumpName(module))}
}

// checkDumpDir creates the dump directory and writes a probe file in it, so that a
// directory that cannot be written is reported once, by NewRuntime.
func checkDumpDir(dir string) error {
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		var f *os.File
		if f, err = os.CreateTemp(dir, ".vkxla-probe-*"); err == nil {
			err = f.Close()
			if rmErr := os.Remove(f.Name()); err == nil {
				err = rmErr
			}
		}
	}
	if err != nil {
		return fmt.Errorf("%w: dump directory %q (WithDumpDir or VKXLA_DUMP) cannot be written: %v", ErrInvalidArgument, dir, err)
	}
	return nil
}

// on reports whether dumping is on (and nothing has failed yet).
func (d *dumper) on() bool { return d != nil && d.failure == nil }

// err is the first write that failed, or nil.
func (d *dumper) err() error {
	if d == nil {
		return nil
	}
	return d.failure
}

// write dumps the text that text returns; it is called only when dumping is on, so
// printing stays off the compile path otherwise.
func (d *dumper) write(name string, text func() string) {
	if d.on() {
		d.writeBytes(name, []byte(text()))
	}
}

func (d *dumper) writeBytes(name string, data []byte) {
	if !d.on() {
		return
	}
	path := filepath.Join(d.dir, name)
	err := os.MkdirAll(filepath.Dir(path), 0o755)
	if err == nil {
		err = os.WriteFile(path, data, 0o644)
	}
	if err != nil {
		d.failure = fmt.Errorf("dump (WithDumpDir or VKXLA_DUMP): %w", err)
	}
}

// writeKernels dumps every generated kernel as SPIR-V and its disassembly.
func (d *dumper) writeKernels(set *kernelSet) {
	if !d.on() {
		return
	}
	for i, ref := range set.all {
		k := ref.kernel
		base := fmt.Sprintf("kernels/%03d-%s", i, dumpName(k.Name))
		d.writeBytes(base+".spv", k.SPIRV)
		text, err := disassemble(k.SPIRV)
		if err != nil {
			text = "disassembly failed: " + err.Error()
		}
		d.writeBytes(base+".spvasm", []byte(text))
	}
}
