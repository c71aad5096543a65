package spirv_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/spirv"
	"github.com/vkxla/vkxla/spirv/tools"
)

// vectorAdd is c[i] = a[i] + b[i] for i < n, n from a push constant.
func vectorAdd(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	f32, u32 := m.TypeF32(), m.TypeU32()
	a := m.StorageBuffer("a", 0, 0, f32, spirv.ReadOnly)
	b := m.StorageBuffer("b", 0, 1, f32, spirv.ReadOnly)
	c := m.StorageBuffer("c", 0, 2, f32, spirv.WriteOnly)
	pc := m.PushConstants("params", spirv.Member{Name: "n", Type: u32})
	k := m.Kernel("main", 64, 1, 1)
	i := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	n := k.LoadMember(pc, 0)
	k.If(k.Less(i, n), func() {
		k.StoreElem(c, i, k.Add(k.LoadElem(a, i), k.LoadElem(b, i)))
	}, nil)
	return m
}

func assemble(t testing.TB, m *spirv.Module) []uint32 {
	t.Helper()
	words, err := m.Assemble()
	require.NoError(t, err)
	return words
}

func TestVectorAddValidates(t *testing.T) {
	words := assemble(t, vectorAdd(spirv.Version1_3))
	text, err := tools.Disassemble(words)
	require.NoError(t, err)
	t.Log(text)
	require.NoError(t, tools.Validate(words, tools.Vulkan1_1))
}
