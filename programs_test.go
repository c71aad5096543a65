package vkxla_test

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// TestPrograms runs whole programs from HLO text (MLP, softmax, layernorm,
// attention, a while loop, and XLA-style dumps) on the device and compares them
// with cpuref, with the fusion pass on and off.
func TestPrograms(t *testing.T) {
	files, err := filepath.Glob("testdata/programs/*.hlo")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 5)
	// The parser's XLA-style dumps (metadata, layouts, elided constants) run too.
	dumps, err := filepath.Glob("hlo/testdata/xla/*.hlo")
	require.NoError(t, err)
	require.NotEmpty(t, dumps)
	files = append(files, dumps...)
	rt := newRuntime(t)
	for _, file := range files {
		name := filepath.Base(filepath.Dir(file)) + "/" + strings.TrimSuffix(filepath.Base(file), ".hlo")
		t.Run(name, func(t *testing.T) {
			m, err := hlo.ParseModuleFile(file)
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(11, 12))
			inputs := make([]*hlo.Literal, len(m.Entry.Params))
			for i, p := range m.Entry.Params {
				inputs[i] = randomLiteral(rng, p.Shape, unitDomain)
			}
			spec := vkxla.ProgramTolerance(m, hlo.F32)
			t.Run("fused", func(t *testing.T) { checkCompiledAgainstCPU(t, rt, m, nil, spec, inputs...) })
			t.Run("unfused", func(t *testing.T) {
				checkCompiledAgainstCPU(t, rt, m, []vkxla.CompileOption{vkxla.WithoutPasses("fusion")}, spec, inputs...)
			})
		})
	}
}
