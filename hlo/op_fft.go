package hlo

import (
	"fmt"
	"slices"
)

// fft(x), fft_type=T, fft_length={n…} is XLA's discrete Fourier transform over the
// last len(fft_length) dimensions of x (1 to 3), each of the given length:
//
//	FFT    complex → complex, forward (exponent −2πi·jk/n), unscaled
//	IFFT   complex → complex, inverse (exponent +2πi·jk/n), scaled by 1/∏n
//	RFFT   real → complex: the forward transform of real input, of which only the
//	       n/2+1 first entries of the last dimension are kept (the rest are their
//	       conjugates)
//	IRFFT  complex → real: the inverse of RFFT; the last dimension holds n/2+1
//	       entries, the result n
//
// f32 pairs with c64 and f64 with c128. cpuref/fft.go computes it.

// FftType is fft's fft_type=, numbered as xla_data.proto numbers it.
type FftType uint8

// The transform types.
const (
	FFT FftType = iota
	IFFT
	RFFT
	IRFFT
)

// fftTypeNames are the names XLA's text uses (the proto enum's, case-sensitive).
var fftTypeNames = [...]string{"FFT", "IFFT", "RFFT", "IRFFT"}

func (t FftType) String() string {
	if int(t) < len(fftTypeNames) {
		return fftTypeNames[t]
	}
	return fmt.Sprintf("ffttype(%d)", uint8(t))
}

// ParseFftType maps FFT, IFFT, RFFT and IRFFT to a transform type.
func ParseFftType(s string) (FftType, error) {
	if i := matchEnum(fftTypeNames[:], s, false); i >= 0 {
		return FftType(i), nil
	}
	return 0, enumError("fft_type", s, fftTypeNames[:])
}

func init() {
	shapeRules[OpFft] = inferFft
	attrCodecs["fft_type"] = attrCodec{
		print: func(in *Instruction) (string, bool) { return in.Attrs.FftType.String(), true },
		parse: func(p *parser, in *Instruction) error {
			return p.parseEnum(func(s string) (err error) { in.Attrs.FftType, err = ParseFftType(s); return })
		},
	}
	attrCodecs["fft_length"] = intListCodec(func(a *Attributes) *[]int64 { return &a.FftLength }, anyList)
	opAttrs[OpFft] = []attrUse{req("fft_type"), req("fft_length")}
}

func inferFft(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	x, t, n := a.operands[0], a.attrs.FftType, a.attrs.FftLength
	if len(n) < 1 || len(n) > 3 {
		return Shape{}, fmt.Errorf("fft_length=%s has %d entries; fft transforms 1 to 3 dimensions", intList(n), len(n))
	}
	if x.Rank() < len(n) {
		return Shape{}, fmt.Errorf("operand %v has fewer than the %d dimensions fft_length=%s transforms", x, len(n), intList(n))
	}
	for _, l := range n {
		if l < 0 {
			return Shape{}, fmt.Errorf("fft_length=%s has a negative length", intList(n))
		}
	}
	out, err := fftResultType(t, x.DType)
	if err != nil {
		return Shape{}, err
	}
	in, res := fftExtents(t, n)
	if lead := x.Rank() - len(n); !slices.Equal(x.Dims[lead:], in) {
		return Shape{}, fmt.Errorf("%v of operand %v: its last dimensions must be %s for fft_length=%s", t, x, intList(in), intList(n))
	}
	s := x.WithDType(out)
	copy(s.Dims[x.Rank()-len(n):], res)
	return s, nil
}

// fftResultType checks the operand type of a transform type and returns the
// result's.
func fftResultType(t FftType, dt DType) (DType, error) {
	switch t {
	case FFT, IFFT:
		if dt.IsComplex() {
			return dt, nil
		}
		return Invalid, fmt.Errorf("%v takes c64 or c128, not %v", t, dt)
	case RFFT:
		if c, ok := ComplexWith(dt); ok {
			return c, nil
		}
		return Invalid, fmt.Errorf("RFFT takes f32 or f64, not %v", dt)
	case IRFFT:
		if dt.IsComplex() {
			return dt.ComplexPart(), nil
		}
		return Invalid, fmt.Errorf("IRFFT takes c64 or c128, not %v", dt)
	}
	return Invalid, fmt.Errorf("unknown fft_type %v", t)
}

// fftExtents are the last dimensions of a transform's operand and result: the
// lengths themselves, but for the halved last dimension (n/2+1) of RFFT's result
// and IRFFT's operand.
func fftExtents(t FftType, n []int64) (in, out []int64) {
	half := slices.Clone(n)
	half[len(n)-1] = n[len(n)-1]/2 + 1
	switch t {
	case RFFT:
		return n, half
	case IRFFT:
		return half, n
	}
	return n, n
}

// Fft adds fft(x), fft_type=t, fft_length=length.
func (b *Builder) Fft(x *Instruction, t FftType, length ...int64) *Instruction {
	return b.emit(opSpec{op: OpFft, operands: ins(x), attrs: Attributes{FftType: t, FftLength: cloneInts(length)}})
}
