package codegen

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
	"github.com/vkxla/vkxla/spirv/tools"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current code generator")

// programText is a program's dispatches and the disassembly of each distinct kernel.
func programText(t *testing.T, p *Program) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "; program %s: inputs %v, outputs %v, scratch %v\n", p.Name, p.Inputs, p.Outputs, p.Scratch)
	seen := map[*Kernel]bool{}
	for i, d := range p.Dispatches {
		fmt.Fprintf(&sb, "; dispatch %d: kernel %s, groups %v, args %v, push %x\n", i, d.Kernel.Name, d.Groups, d.Args, d.Push)
	}
	for _, d := range p.Dispatches {
		if seen[d.Kernel] {
			continue
		}
		seen[d.Kernel] = true
		words, err := spirv.Words(d.Kernel.SPIRV)
		require.NoError(t, err)
		text, err := tools.Disassemble(words)
		require.NoError(t, err)
		fmt.Fprintf(&sb, "\n; kernel %s, local size %v, %d bindings, %d push-constant bytes\n%s",
			d.Kernel.Name, d.Kernel.LocalSize, d.Kernel.Bindings, d.Kernel.PushConstantSize, text)
	}
	return sb.String()
}

func checkGolden(t *testing.T, name string, p *Program) {
	t.Helper()
	got := programText(t, p)
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./spirv/codegen -update")
	require.Equal(t, string(want), got, "%s differs from the generated code; if the change is intended, run go test ./spirv/codegen -update", path)
}

func TestGoldenElementwiseAdd(t *testing.T) {
	b := newCB(t, "add")
	x, y := b.param(s(hlo.F32, 3, 5)), b.param(s(hlo.F32, 3, 5))
	checkGolden(t, "add_f32", lowerOK(t, b.build(b.simple(hlo.OpAdd, x, y))))
}

func TestGoldenReduce(t *testing.T) {
	checkGolden(t, "reduce_sum_rows", lowerOK(t, reduceComp(t, hlo.F32, []int64{4, 4096}, []int64{1}, hlo.OpAdd)))
}

func TestGoldenGEMM(t *testing.T) {
	b := newCB(t, "gemm")
	x, y := b.param(s(hlo.F32, 64, 64)), b.param(s(hlo.F32, 64, 64))
	dd := &hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}
	checkGolden(t, "gemm_64", lowerOK(t, b.build(b.op(hlo.OpDot, hlo.Attributes{Dot: dd}, nil, x, y))))
}

// TestOptimize runs SPIRV-Tools' performance passes over representative kernels:
// the output must still validate. Lower itself does not optimise (drivers run their
// own compilers; the passes shrink these kernels by 10-50%, their effect on speed
// is not measured yet); the runtime may apply them.
func TestOptimize(t *testing.T) {
	b := newCB(t, "gemm")
	x, y := b.param(s(hlo.F32, 64, 64)), b.param(s(hlo.F32, 64, 64))
	dd := &hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}
	programs := []*Program{
		lowerOK(t, b.build(b.op(hlo.OpDot, hlo.Attributes{Dot: dd}, nil, x, y))),
		lowerOK(t, reduceComp(t, hlo.F16, []int64{4, 4096}, []int64{1}, hlo.OpAdd)),
		lowerOK(t, scatterComp(t, hlo.F32, 10, 4, hlo.OpMultiply, false)),
	}
	for _, p := range programs {
		for _, d := range p.Dispatches {
			words, err := spirv.Words(d.Kernel.SPIRV)
			require.NoError(t, err)
			opt, err := tools.Optimize(words, tools.Vulkan1_1)
			require.NoError(t, err, d.Kernel.Name)
			require.NoError(t, tools.Validate(opt, tools.Vulkan1_1), d.Kernel.Name)
			t.Logf("%s: %d words, %d after optimisation", d.Kernel.Name, len(words), len(opt))
		}
	}
}
