package train

import (
	"fmt"
	"math/rand/v2"

	"github.com/vkxla/vkxla/hlo"
)

// Init draws the model's initial parameters from seed and zero optimizer state for
// step: the first Updated inputs of its module (t is 1).
func (s *Step) Init(seed uint64) []*hlo.Literal {
	r := rand.New(rand.NewPCG(seed, 0x7a1))
	var in []*hlo.Literal
	for _, p := range s.Model.Params {
		lit := hlo.NewLiteral(p.Shape)
		for i := range lit.NumElements() {
			lit.SetFloat64(i, p.Init.Const+p.Init.Scale*(2*r.Float64()-1))
		}
		in = append(in, lit)
	}
	for _, st := range s.State {
		in = append(in, hlo.NewLiteral(st.Shape))
	}
	t := hlo.NewLiteral(hlo.Scalar(s.Model.Params[0].Shape.DType))
	t.SetFloat64(0, 1)
	return append(in, t)
}

// Blobs is a synthetic classification set of n points in `features` dimensions:
// each class has a centre drawn uniform in [-2, 2]^features and its points are
// the centre plus uniform noise in [-spread, spread]^features; classes take turns
// (point i is of class i mod classes). It returns x [n, features] and one-hot
// labels [n, classes] of type dt. With a spread well under the distance between
// centres the classes are separable and an MLP's loss can go near zero.
func Blobs(seed uint64, dt hlo.DType, n, features, classes int64, spread float64) (x, labels *hlo.Literal) {
	r := rand.New(rand.NewPCG(seed, 0xb10b5))
	centres := make([]float64, classes*features)
	for i := range centres {
		centres[i] = 4*r.Float64() - 2
	}
	x = hlo.NewLiteral(hlo.MakeShape(dt, n, features))
	labels = hlo.NewLiteral(hlo.MakeShape(dt, n, classes))
	for i := range n {
		c := i % classes
		labels.SetFloat64(int(i*classes+c), 1)
		for f := range features {
			x.SetFloat64(int(i*features+f), centres[c*features+f]+spread*(2*r.Float64()-1))
		}
	}
	return x, labels
}

// OneHotSequences is a next-token data set for TransformerLM: batch sequences of
// seq+1 tokens following a fixed rule (token k+1 = (a·token k + c) mod vocab
// from a random first token), as tokens (the first seq) and targets (the last
// seq), both one-hot [batch, seq, vocab]. The rule is deterministic, so the loss
// can fall towards zero.
func OneHotSequences(seed uint64, dt hlo.DType, batch, seq, vocab int64) (tokens, targets *hlo.Literal) {
	r := rand.New(rand.NewPCG(seed, 0x5e9))
	shape := hlo.MakeShape(dt, batch, seq, vocab)
	tokens, targets = hlo.NewLiteral(shape), hlo.NewLiteral(shape)
	for bi := range batch {
		tok := r.Int64N(vocab)
		for s := range seq {
			next := (3*tok + 1) % vocab
			tokens.SetFloat64(int((bi*seq+s)*vocab+tok), 1)
			targets.SetFloat64(int((bi*seq+s)*vocab+next), 1)
			tok = next
		}
	}
	return tokens, targets
}

// Uniform is a literal of the given shape with values uniform in [-1, 1) from seed.
func Uniform(seed uint64, s hlo.Shape) *hlo.Literal {
	r := rand.New(rand.NewPCG(seed, 0x11))
	lit := hlo.NewLiteral(s)
	for i := range lit.NumElements() {
		lit.SetFloat64(i, 2*r.Float64()-1)
	}
	return lit
}

// Shard is the i-th of n equal slices of x along its first (batch) dimension: a
// device's part of a batch for BuildDataParallel's step.
func Shard(x *hlo.Literal, n, i int) (*hlo.Literal, error) {
	s := x.Shape()
	if !s.IsArray() || s.Rank() == 0 || n < 1 || i < 0 || i >= n || s.Dims[0]%int64(n) != 0 {
		return nil, fmt.Errorf("train: shard %d of %d of %v: want an array whose first dimension splits into %d", i, n, s, n)
	}
	part := s.Clone()
	part.Dims[0] /= int64(n)
	size := int(part.ByteSize())
	return hlo.LiteralFromBytes(part, append([]byte(nil), x.Bytes()[i*size:(i+1)*size]...))
}
