package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

func TestSoftmaxCrossEntropy(t *testing.T) {
	logits := tensor{dims: []int64{2, 3}, v: []float64{1, 2, 3, 0, 0, 0}}
	labels := tensor{dims: []int64{2, 3}, v: []float64{0, 0, 1, 0.5, 0.5, 0}}
	b := hlo.NewBuilder("xent")
	got := evaluate(t, b, SoftmaxCrossEntropy(b, logits.param(b, "logits"), labels.param(b, "labels")), logits, labels)
	// Row 0: −log(e³/(e+e²+e³)); row 1: −log(1/3) (uniform logits); their mean.
	e := math.E
	want := (-math.Log(e*e*e/(e+e*e+e*e*e)) + math.Log(3)) / 2
	assertClose(t, "cross-entropy", got[0], tensor{v: []float64{want}}, 1e-15)
}

func TestOptimizers(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	p, g, m, v := randomTensor(rng, 5), randomTensor(rng, 5), randomTensor(rng, 5), randomTensor(rng, 5)
	for i := range v.v {
		v.v[i] *= v.v[i]
	}
	cfg := AdamConfig{LR: 0.01, Beta1: 0.9, Beta2: 0.99, Eps: 1e-7, WeightDecay: 0.1}
	const step = 3
	b := hlo.NewBuilder("optimizers")
	pp, pg, pm, pv := p.param(b, "p"), g.param(b, "g"), m.param(b, "m"), v.param(b, "v")
	sp, sv := SGDMomentum(b, pp, pg, pm, 0.1, 0.9)
	ap, am, av := Adam(b, pp, pg, pm, pv, b.Parameter(hlo.Scalar(hlo.F64), "t"), cfg)
	got := evaluate(t, b, b.Tuple(sp, sv, ap, am, av), p, g, m, v, literalInput{hlo.ScalarLiteral(float64(step))})
	want := make([]tensor, 5)
	for i := range want {
		want[i] = newTensor(5)
	}
	for i := range 5 {
		vel := 0.9*m.v[i] + g.v[i]
		want[0].v[i], want[1].v[i] = p.v[i]-0.1*vel, vel
		m2 := 0.9*m.v[i] + 0.1*g.v[i]
		v2 := 0.99*v.v[i] + 0.01*g.v[i]*g.v[i]
		mHat, vHat := m2/(1-math.Pow(0.9, step)), v2/(1-math.Pow(0.99, step))
		want[2].v[i] = p.v[i] - 0.01*(mHat/(math.Sqrt(vHat)+1e-7)+0.1*p.v[i])
		want[3].v[i], want[4].v[i] = m2, v2
	}
	for i, name := range []string{"sgd param", "sgd velocity", "adamw param", "adam m", "adam v"} {
		assertClose(t, name, got[i], want[i], 1e-14)
	}
}
