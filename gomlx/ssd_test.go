package gomlx_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn"
)

// The model suite's MobileNet-SSD (bench/models.go's mobileNetSSD: nn.MobileNetSSD,
// SSD300's detector on MobileNet v1 as TensorFlow exports it for inference: folded
// batch norms, ReLU6, SAME padding, 13 depthwise-separable blocks, 4 extra layer
// pairs and six box/class heads) written in GoMLX, and the same network built with
// hlo/nn. Both run in f32 here (the suite's is bf16): the GoMLX port is compared
// element by element with the hlo/nn program on cpuref.

// ssdSmall is the model suite's small detector; ssdMedium the full network
// (α = 1, 91 COCO classes) at half SSD300's resolution, which lavapipe and
// simplego run in seconds.
var (
	ssdSmall  = nn.SSDConfig{Size: 33, Classes: 5, Width: 1.0 / 8}
	ssdMedium = nn.SSDConfig{Size: 150, Classes: 91}
)

// ssdParams lists the images and then every weight in the order nn.MobileNetSSD
// asks for them, which ssdGoMLX follows.
func ssdParams(c nn.SSDConfig) []param {
	ps := []param{{name: "images", dims: []int{1, int(c.Size), int(c.Size), 3}}}
	b := hlo.NewBuilder("ssd_params")
	images := b.Parameter(hlo.MakeShape(hlo.F32, 1, c.Size, c.Size, 3), "images")
	nn.MobileNetSSD(b, images, c, func(name string, dims ...int64) nn.X {
		p := param{name: name}
		for _, d := range dims {
			p.dims = append(p.dims, int(d))
		}
		ps = append(ps, p)
		return b.Parameter(hlo.MakeShape(hlo.F32, dims...), name)
	})
	return ps
}

// ssdModule is the hlo/nn network over ssdParams, returning (boxes, classes).
func ssdModule(c nn.SSDConfig) (*hlo.Module, error) {
	b := hlo.NewBuilder("mobilenet_ssd")
	images := b.Parameter(hlo.MakeShape(hlo.F32, 1, c.Size, c.Size, 3), "images")
	boxes, classes := nn.MobileNetSSD(b, images, c, func(name string, dims ...int64) nn.X {
		return b.Parameter(hlo.MakeShape(hlo.F32, dims...), name)
	})
	return b.Build(b.Tuple(boxes, classes))
}

// ssdWeights hands out the weight nodes in ssdParams' order, checking that the
// network asks for the weight it expects (a port that drifted from hlo/nn's
// order fails here, not with wrong numbers).
type ssdWeights struct {
	ps    []param
	nodes []*graph.Node
	next  int
}

func (w *ssdWeights) get(name string, dims ...int) *graph.Node {
	w.next++
	if p := w.ps[w.next]; p.name != name || !slices.Equal(p.dims, dims) {
		panic(fmt.Sprintf("weight %d: the port asks for %s%v, hlo/nn has %s%v", w.next, name, dims, p.name, p.dims))
	}
	return w.nodes[w.next]
}

// ssdGoMLX is nn.MobileNetSSD in GoMLX over ssdParams' nodes.
func ssdGoMLX(c nn.SSDConfig) func([]*graph.Node) []*graph.Node {
	return func(in []*graph.Node) []*graph.Node {
		w := &ssdWeights{ps: ssdParams(c), nodes: in}
		ch := func(n int) int { return max(int(float64(n)*ssdWidth(c)), 1) }
		h := ssdConv(w, in[0], "conv0", 3, ch(32), 2, false)
		var maps []*graph.Node
		for i, blk := range []struct{ stride, out int }{
			{1, 64}, {2, 128}, {1, 128}, {2, 256}, {1, 256}, {2, 512},
			{1, 512}, {1, 512}, {1, 512}, {1, 512}, {1, 512}, {2, 1024}, {1, 1024},
		} {
			name := fmt.Sprintf("block%d", i+1)
			h = ssdConv(w, h, name+".depthwise", 3, channels(h), blk.stride, true)
			h = ssdConv(w, h, name+".pointwise", 1, ch(blk.out), 1, false)
			if i == 10 { // MobileNet's conv11: SSD's first feature map
				maps = append(maps, h)
			}
		}
		maps = append(maps, h)
		for i, e := range []struct{ mid, out int }{{256, 512}, {128, 256}, {128, 256}, {64, 128}} {
			name := fmt.Sprintf("extra%d", i+1)
			h = ssdConv(w, h, name+".reduce", 1, ch(e.mid), 1, false)
			h = ssdConv(w, h, name+".conv", 3, ch(e.out), 2, false)
			maps = append(maps, h)
		}
		var boxes, classes []*graph.Node
		for i, m := range maps {
			anchors := 6
			if i == 0 {
				anchors = 3
			}
			name := fmt.Sprintf("head%d", i)
			boxes = append(boxes, ssdPredictor(w, m, name+".box", anchors, 4))
			classes = append(classes, ssdPredictor(w, m, name+".class", anchors, int(c.Classes)))
		}
		return []*graph.Node{graph.Concatenate(boxes, 1), graph.Concatenate(classes, 1)}
	}
}

func ssdWidth(c nn.SSDConfig) float64 {
	if c.Width == 0 {
		return 1
	}
	return c.Width
}

func channels(x *graph.Node) int { return x.Shape().Dimensions[3] }

// ssdConv is a size×size convolution (depthwise: one filter per channel, GoMLX's
// ChannelGroupCount) with a bias, then ReLU6.
func ssdConv(w *ssdWeights, x *graph.Node, name string, size, out, stride int, depthwise bool) *graph.Node {
	in := channels(x)
	kin := in
	if depthwise {
		kin = 1
	}
	// Dilations are set though they are 1: simplego's grouped convolution
	// indexes them and panics when they are left out (GoMLX v0.26.0).
	conv := graph.Convolve(x, w.get(name, size, size, kin, out)).Strides(stride).Dilations(1).PaddingPerDim(samePadding(x, size, stride))
	if depthwise {
		conv = conv.ChannelGroupCount(in)
	}
	y := graph.Add(conv.Done(), trailing(w.get(name+".bias", out), 4))
	return graph.Clip(y, graph.ScalarZero(y.Graph(), y.DType()), graph.Scalar(y.Graph(), y.DType(), 6))
}

// ssdPredictor is a head: a 1×1 convolution to anchors·values channels plus a
// bias, reshaped to [N, H·W·anchors, values].
func ssdPredictor(w *ssdWeights, m *graph.Node, name string, anchors, values int) *graph.Node {
	d := m.Shape().Dimensions
	y := graph.Convolve(m, w.get(name, 1, 1, d[3], anchors*values)).Strides(1).Dilations(1).PaddingPerDim([][2]int{{0, 0}, {0, 0}}).Done()
	y = graph.Add(y, trailing(w.get(name+".bias", anchors*values), 4))
	return graph.Reshape(y, d[0], d[1]*d[2]*anchors, values)
}

// samePadding is TensorFlow's SAME padding of x's two spatial axes for a
// size×size window at stride (⌈in/stride⌉ outputs, the odd pad at the end), as
// hlo/nn pads. GoMLX's PadSame pads (size−1)/2 and size/2 whatever the stride,
// which puts a stride-2 window over an even input one position off.
func samePadding(x *graph.Node, size, stride int) [][2]int {
	pads := make([][2]int, 2)
	for i := range pads {
		in := x.Shape().Dimensions[1+i]
		out := (in + stride - 1) / stride
		total := max((out-1)*stride+size-in, 0)
		pads[i] = [2]int{total / 2, total - total/2}
	}
	return pads
}

// TestMobileNetSSDAgreesWithModelSuite: the detector written in GoMLX, on the
// vkxla backend, gives the model suite's network on cpuref, boxes and class
// logits (47 convolutions deep: within 1e-4 of each output's largest magnitude).
func TestMobileNetSSDAgreesWithModelSuite(t *testing.T) {
	for _, c := range []nn.SSDConfig{ssdSmall, {Size: 32, Classes: 3, Width: 1.0 / 16}} {
		t.Run(fmt.Sprintf("size%d", c.Size), func(t *testing.T) {
			ps := ssdParams(c)
			outs, want := bothPrograms(t, ps, 4, ssdGoMLX(c), func() (*hlo.Module, error) { return ssdModule(c) })
			for i, name := range []string{"boxes", "classes"} {
				w := want.Elems()[i]
				if got := outs[i].Shape().Dimensions; !slices.Equal(toInt64(got), w.Shape().Dims) {
					t.Fatalf("%s: dims %v, want %v", name, got, w.Shape().Dims)
				}
				if err := agree(tensors.MustCopyFlatData[float32](outs[i]), w, 1e-4*maxAbs(w)+1e-6); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
		})
	}
}

func toInt64(ds []int) []int64 {
	out := make([]int64, len(ds))
	for i, d := range ds {
		out[i] = int64(d)
	}
	return out
}

// BenchmarkMobileNetSSD: the full detector at ssdMedium's size; see
// benchModelSuite.
func BenchmarkMobileNetSSD(b *testing.B) {
	c := ssdMedium
	benchModelSuite(b, ssdParams(c), ssdGoMLX(c), func() (*hlo.Module, error) { return ssdModule(c) }, true)
}
