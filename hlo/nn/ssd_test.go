package nn

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// TestMobileNetSSDSize: at 300×300 with α = 1 the network has the convolutions
// of issue 12 — 34 dense, 13 depthwise, 2·Σ(output elements · window · input
// channels per group) = 2 474 258 816 flops (worked out layer by layer from
// the TensorFlow model: 2.23 G in the backbone and extras, 0.24 G in the heads) —
// and 19²·3 + (10² + 5² + 3² + 2² + 1²)·6 = 1917 anchors.
func TestMobileNetSSDSize(t *testing.T) {
	b := hlo.NewBuilder("ssd")
	weights := func(name string, dims ...int64) X { return b.Parameter(hlo.MakeShape(hlo.BF16, dims...), name) }
	images := b.Parameter(hlo.MakeShape(hlo.BF16, 1, 300, 300, 3), "images")
	boxes, classes := MobileNetSSD(b, images, SSDConfig{Size: 300, Classes: 91}, weights)
	m, err := b.Build(b.Tuple(boxes, classes))
	if err != nil {
		t.Fatal(err)
	}
	dense, depthwise, flops := 0, 0, int64(0)
	for _, in := range m.Entry.Instructions {
		if in.Op != hlo.OpConvolution {
			continue
		}
		if in.Attrs.FeatureGroupCount > 1 {
			depthwise++
		} else {
			dense++
		}
		k := in.Operands[1].Shape.Dims // HWIO
		flops += 2 * in.Shape.NumElements() * k[0] * k[1] * k[2]
	}
	if dense != 34 || depthwise != 13 || flops != 2474258816 {
		t.Fatalf("%d dense and %d depthwise convolutions, %d flops; want 34, 13, 2474258816", dense, depthwise, flops)
	}
	if got := boxes.Shape.String(); got != "bf16[1,1917,4]" {
		t.Errorf("boxes %s, want bf16[1,1917,4]", got)
	}
	if got := classes.Shape.String(); got != "bf16[1,1917,91]" {
		t.Errorf("classes %s, want bf16[1,1917,91]", got)
	}
}

// TestMobileNetSSDByDefinition: a tiny SSD (9×9 input, α = 1/16, 3 classes)
// against the network computed layer by layer with the reference convolution.
func TestMobileNetSSDByDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	b := hlo.NewBuilder("ssd")
	var inputs []input
	vals := map[string]tensor{}
	images := randomTensor(rng, 1, 9, 9, 3)
	inputs = append(inputs, images)
	px := images.param(b, "images")
	weights := func(name string, dims ...int64) X {
		w := randomTensor(rng, dims...)
		vals[name] = w
		inputs = append(inputs, w)
		return w.param(b, name)
	}
	cfg := SSDConfig{Size: 9, Classes: 3, Width: 1.0 / 16}
	boxes, classes := MobileNetSSD(b, px, cfg, weights)
	got := evaluate(t, b, b.Tuple(boxes, classes), inputs...)

	layer := func(x tensor, name string, stride int64) tensor {
		y := refConv(x, vals[name], stride, Same)
		bias := vals[name+".bias"]
		return rowsOf(y, func(row []float64) []float64 {
			out := make([]float64, len(row))
			for i, v := range row {
				out[i] = math.Min(math.Max(v+bias.v[i], 0), 6)
			}
			return out
		})
	}
	h := layer(images, "conv0", 2)
	var maps []tensor
	for i, blk := range ssdBackbone {
		name := "block" + strconv.Itoa(i+1)
		h = layer(layer(h, name+".depthwise", blk.stride), name+".pointwise", 1)
		if i == ssdFirstMap {
			maps = append(maps, h)
		}
	}
	maps = append(maps, h)
	for i := range ssdExtras {
		name := "extra" + strconv.Itoa(i+1)
		h = layer(layer(h, name+".reduce", 1), name+".conv", 2)
		maps = append(maps, h)
	}
	// With a batch of one, the concatenation of the heads' NHWC outputs is their
	// row-major data one after the other.
	var wantBoxes, wantClasses []float64
	for i, m := range maps {
		head := func(kind string) []float64 {
			name := "head" + strconv.Itoa(i) + "." + kind
			y := refConv(m, vals[name], 1, Same)
			bias := vals[name+".bias"]
			return rowsOf(y, func(row []float64) []float64 {
				out := make([]float64, len(row))
				for j, v := range row {
					out[j] = v + bias.v[j]
				}
				return out
			}).v
		}
		wantBoxes = append(wantBoxes, head("box")...)
		wantClasses = append(wantClasses, head("class")...)
	}
	anchors := int64(len(wantBoxes) / 4)
	assertClose(t, "boxes", got[0], tensor{dims: []int64{1, anchors, 4}, v: wantBoxes}, 1e-12)
	assertClose(t, "classes", got[1], tensor{dims: []int64{1, anchors, 3}, v: wantClasses}, 1e-12)
}
