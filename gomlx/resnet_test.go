package gomlx_test

import (
	"testing"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn"
)

// The model suite's ResNet-50 bottleneck block (bench/models.go's resNetBlock:
// nn.ResNetBlock, 1×1 reduce, 3×3, 1×1 expand, inference batch norms, identity
// shortcut) written in GoMLX, and the same block built with hlo/nn.

// resnetSizes: an NHWC image of size×size×c, a bottleneck of mid channels.
type resnetSizes struct{ size, c, mid int }

// resnetSmall is the model suite's small block; resnetMedium a block lavapipe and
// simplego run in tens of milliseconds (ResNet-50's conv2_x is 56×56, 256 → 64).
var (
	resnetSmall  = resnetSizes{8, 16, 4}
	resnetMedium = resnetSizes{28, 128, 32}
)

// resnetParams lists x, the three kernels and the three batch norms' statistics
// in the order both programs take them.
func resnetParams(s resnetSizes) []param {
	ps := []param{{name: "x", dims: []int{1, s.size, s.size, s.c}},
		{name: "reduce", dims: []int{1, 1, s.c, s.mid}}, {name: "spatial", dims: []int{3, 3, s.mid, s.mid}}, {name: "expand", dims: []int{1, 1, s.mid, s.c}}}
	for _, bn := range []struct {
		name string
		n    int
	}{{"reduce_bn", s.mid}, {"spatial_bn", s.mid}, {"expand_bn", s.c}} {
		for _, stat := range []string{"scale", "offset", "mean", "variance"} {
			ps = append(ps, param{name: bn.name + "." + stat, dims: []int{bn.n}})
		}
	}
	return ps
}

// resnetGoMLX is the block in GoMLX: in holds resnetParams' nodes.
func resnetGoMLX(in []*graph.Node) *graph.Node {
	x, norms := in[0], in[4:]
	conv := func(h, k *graph.Node) *graph.Node { return graph.Convolve(h, k).Strides(1).PadSame().Done() }
	relu := func(h *graph.Node) *graph.Node { return graph.Max(h, graph.ScalarZero(h.Graph(), h.DType())) }
	h := relu(batchNorm(conv(x, in[1]), norms[0:4]))
	h = relu(batchNorm(conv(h, in[2]), norms[4:8]))
	return relu(graph.Add(x, batchNorm(conv(h, in[3]), norms[8:12])))
}

// batchNorm is inference batch norm over the last axis with ResNet's epsilon
// (1e-3): x·scale/√(var+ε) + offset − mean·scale/√(var+ε); st holds scale,
// offset, mean, variance.
func batchNorm(x *graph.Node, st []*graph.Node) *graph.Node {
	mul := graph.Mul(st[0], graph.Rsqrt(graph.AddScalar(st[3], 1e-3)))
	shift := graph.Sub(st[1], graph.Mul(st[2], mul))
	return graph.Add(graph.Mul(x, trailing(mul, x.Rank())), trailing(shift, x.Rank()))
}

// resnetModule is the same block built with hlo/nn, its parameters in
// resnetParams' order.
func resnetModule(s resnetSizes) (*hlo.Module, error) {
	b := hlo.NewBuilder("resnet_block")
	ps := map[string]*hlo.Instruction{}
	for _, p := range resnetParams(s) {
		ps[p.name] = b.Parameter(p.shape(), p.name)
	}
	norm := func(name string) nn.BatchNorm {
		return nn.BatchNorm{Scale: ps[name+".scale"], Offset: ps[name+".offset"], Mean: ps[name+".mean"], Variance: ps[name+".variance"]}
	}
	p := nn.ResNetParams{Reduce: ps["reduce"], Spatial: ps["spatial"], Expand: ps["expand"],
		ReduceNorm: norm("reduce_bn"), SpatialNorm: norm("spatial_bn"), ExpandN: norm("expand_bn")}
	return b.Build(nn.ResNetBlock(b, ps["x"], p))
}

// TestResNetBlockAgreesWithModelSuite: the block written in GoMLX, on the vkxla
// backend, gives the model suite's block on cpuref (outputs of order 1 after
// three normalised convolutions: 1e-4 absolute).
func TestResNetBlockAgreesWithModelSuite(t *testing.T) {
	s := resnetSmall
	ps := resnetParams(s)
	outs, want := bothPrograms(t, ps, 2, resnetGoMLX, func() (*hlo.Module, error) { return resnetModule(s) })
	if err := agree(tensors.MustCopyFlatData[float32](outs[0]), want, 1e-4); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkResNetBlock: the block at resnetMedium's sizes; see benchModelSuite.
func BenchmarkResNetBlock(b *testing.B) {
	s := resnetMedium
	benchModelSuite(b, resnetParams(s), func(in []*graph.Node) []*graph.Node { return []*graph.Node{resnetGoMLX(in)} },
		func() (*hlo.Module, error) { return resnetModule(s) }, true)
}
