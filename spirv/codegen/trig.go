package codegen

import (
	"math"

	"github.com/vkxla/vkxla/spirv"
)

// Sine and cosine of f32 and f64 (f16 and bf16 compute in f32), within 2 ulp of the
// correctly rounded result over the whole finite range, with integer and float
// operations the Vulkan core guarantees (no FMA, no float64 for f32, no int64).
//
// x = n·π/2 + r with |r| <= π/4 (about), then sin or cos of r by the quadrant n mod
// 4. r is carried as a float pair hi + lo, so cancellation near multiples of π/2
// costs no accuracy. Two reductions produce it:
//
//   - the fast path, for |x| < 2^fastBits: n = round(x·2/π) has at most fastBits
//     bits, and π/2 is split into parts so that every n·part is exact: for f32 in
//     single words where the first differences are exact (trigReduceShort), for
//     f64 subtracted with error-free sums (Cody–Waite carried in double-word
//     arithmetic, trigReduceFast);
//   - the exact path (Payne–Hanek), for larger finite |x|, taken in a branch: the
//     integer significand M of |x| = M·2^e times the window of 2/π's bits that
//     matters at exponent e, in 32-bit words (OpUMulExtended), gives x·2/π mod 4 as
//     a fixed-point number; its fraction, normalised, times π/2 in 64-bit fixed
//     point, gives r.
//
// Every float operation is decorated NoContraction: the error-free sums depend on
// each operation rounding as written.

// maxTrigWindowWords is the longest window of 2/π's bits the exact path multiplies.
const maxTrigWindowWords = 6

// trigFormat is how one float type is reduced and evaluated.
type trigFormat struct {
	mant     int  // significand bits with the implicit one
	bias     int  // exponent bias
	fastBits uint // |x| < 2^fastBits takes the fast path
	short    bool // the fast path is trigReduceShort (single words) rather than trigReduceFast
	parts    int  // exact parts of π/2 in trigReduceFast, before a rounded remainder
	window   int  // words of 2/π in the exact path: the fraction keeps ≥ 2·mant+26 bits after the worst cancellation
	tiny     int  // below 2^tiny, sin(x) rounds to x and cos(x) to 1
	// Taylor terms of sin(r)/r and cos(r) in r² beyond the first: the first term
	// left out is below 2^-(mant+4) of the result for |r| <= π/4.
	sinTerms, cosTerms int
}

var (
	// f32: the closest an f32 comes to a multiple of π/2 leaves ~30 fraction bits
	// to cancel; the short path carries π/2 to 61 bits, exact where r is small.
	trigF32 = trigFormat{mant: 24, bias: 127, fastBits: 11, short: true, window: 3, tiny: -12, sinTerms: 4, cosTerms: 5}
	// f64: the worst case cancels 61 bits (Kahan–McDonald); 3×33-bit parts carry
	// 152 bits, the 6-word window leaves 125 bits after the worst cancellation.
	trigF64 = trigFormat{mant: 53, bias: 1023, fastBits: 20, parts: 3, window: 6, tiny: -27, sinTerms: 10, cosTerms: 11}
)

func (k *kernel) trigFormat(t spirv.ID) trigFormat {
	if k.m.Width(t) == 64 {
		return trigF64
	}
	return trigF32
}

// sinCos is sin(x), or cos(x) when cos: NaN for ±inf and NaN; sin keeps ±0 and tiny
// arguments (subnormals too, tested on their bits, since a device without denorm
// preservation flushes them in float operations).
func (k *kernel) sinCos(x spirv.ID, cos bool) spirv.ID {
	f, m := k.f, k.m
	t := m.TypeOf(x)
	tf := k.trigFormat(t)
	u32 := m.TypeU32()
	hiV, loV, qV := f.Var(t, "trig_hi"), f.Var(t, "trig_lo"), f.Var(u32, "trig_q")
	h, l, q := k.trigReduceFirst(x, tf)
	f.Store(hiV, h)
	f.Store(loV, l)
	f.Store(qV, q)
	ax := f.GLSL(spirv.GLSLFAbs, x)
	big := f.LogicalAnd(f.GreaterEqual(ax, k.fc(x, math.Ldexp(1, int(tf.fastBits)))), f.LogicalNot(f.IsInf(x)))
	exactPath := func() {
		h, l, q := k.trigReduceExact(x, tf)
		f.Store(hiV, h)
		f.Store(loV, l)
		f.Store(qV, q)
	}
	// A branch: drivers that branch per group skip the exact path when no lane of
	// the group needs it. lavapipe (Mesa 22.3) runs both arms of every if under a
	// lane mask, and every loop's body at least once, so there every element pays
	// for the exact path; an if costs it less than the loop of at most one
	// iteration this used to be (docs/results.md), and adds nothing to the
	// target's loop budget.
	f.If(big, exactPath, nil)
	v := k.sinCosPoly(f.Load(hiV), f.Load(loV), f.Load(qV), cos, tf)
	tiny := f.Less(k.absBits(x), k.absBits(k.fc(x, math.Ldexp(1, tf.tiny))))
	small := x
	if cos {
		small = k.fc(x, 1)
	}
	v = f.Select(tiny, small, v)
	return f.Select(f.LogicalOr(f.IsInf(x), f.IsNan(x)), m.ConstFloat(t, math.NaN()), v)
}

// absBits is a float's encoding without its sign, as an unsigned integer: it orders
// non-negative floats, subnormals included, whatever the float unit does with them.
func (k *kernel) absBits(x spirv.ID) spirv.ID {
	w := k.m.Width(k.m.TypeOf(x))
	ut := k.m.TypeInt(w, false)
	return k.f.And(k.f.Bitcast(ut, x), k.m.ConstUint(ut, 1<<(w-1)-1))
}

// Float arithmetic decorated NoContraction (see exact).
func (k *kernel) fadd(a, b spirv.ID) spirv.ID { return k.exact(k.f.FAdd(a, b)) }
func (k *kernel) fsub(a, b spirv.ID) spirv.ID { return k.exact(k.f.FSub(a, b)) }
func (k *kernel) fmul(a, b spirv.ID) spirv.ID { return k.exact(k.f.FMul(a, b)) }

// twoSum is Knuth's error-free sum: s = fl(a+b) and e = a+b-s exactly.
func (k *kernel) twoSum(a, b spirv.ID) (s, e spirv.ID) {
	s = k.fadd(a, b)
	bb := k.fsub(s, a)
	return s, k.fadd(k.fsub(a, k.fsub(s, bb)), k.fsub(b, bb))
}

// fastTwoSum is twoSum for |a| >= |b| (Dekker): three operations.
func (k *kernel) fastTwoSum(a, b spirv.ID) (s, e spirv.ID) {
	s = k.fadd(a, b)
	return s, k.fsub(b, k.fsub(s, a))
}

// trigReduceFirst is the fast path's reduction, for |x| < 2^fastBits.
func (k *kernel) trigReduceFirst(x spirv.ID, tf trigFormat) (hi, lo, q spirv.ID) {
	if tf.short {
		return k.trigReduceShort(x, tf)
	}
	return k.trigReduceFast(x, tf)
}

// trigReduceFast is the double-word fast path's reduction of x, exact for |x| < 2^fastBits.
func (k *kernel) trigReduceFast(x spirv.ID, tf trigFormat) (hi, lo, q spirv.ID) {
	f := k.f
	n := k.nearestPio2Multiple(x)
	parts := pio2Parts(tf.parts, uint(tf.mant)-tf.fastBits)
	h := k.fsub(x, k.fmul(n, k.fc(x, parts[0])))
	l := k.fc(x, 0)
	for _, p := range parts[1 : len(parts)-1] {
		var e spirv.ID
		h, e = k.twoSum(h, f.FNegate(k.fmul(n, k.fc(x, p))))
		l = k.fadd(l, e)
	}
	l = k.fsub(l, k.fmul(n, k.fc(x, parts[len(parts)-1])))
	hi, lo = k.fastTwoSum(h, l)
	return hi, lo, k.quadrant(n)
}

// trigReduceShort is the f32 fast path's reduction in single words, for |x| <
// 2^fastBits: n = round(x·2/π) has at most fastBits bits. π/2 = C1 + C2 + C3 + C4
// (pio2ShortParts): C1 ends at bit 2^-(mant-1-fastBits) and C2 at 2^-mant, so n·C1
// and n·C2 are exact, x − n·C1 is exact (Sterbenz: x is within a factor 2 of
// n·C1), and so is the next difference, a multiple of 2^-mant below 1. C3 has
// mant − fastBits bits (n·C3 exact) and C4 is the rest, rounded: near a multiple
// of π/2, where r is as small as 2^-28, the subtraction of n·C3 is exact, and away
// from one the error of the last two steps is carried in lo. π/2 is carried to
// about 61 bits. Every f32 below 2^fastBits is checked on lavapipe by
// BenchmarkSinCosF32Exhaustive.
func (k *kernel) trigReduceShort(x spirv.ID, tf trigFormat) (hi, lo, q spirv.ID) {
	f := k.f
	n := k.nearestPio2Multiple(x)
	c := pio2ShortParts(tf.mant, tf.fastBits)
	r := k.fsub(k.fsub(x, k.fmul(n, k.fc(x, c[0]))), k.fmul(n, k.fc(x, c[1])))
	hi, lo = k.fastTwoSum(r, f.FNegate(k.fmul(n, k.fc(x, c[2]))))
	lo = k.fsub(lo, k.fmul(n, k.fc(x, c[3])))
	return hi, lo, k.quadrant(n)
}

// nearestPio2Multiple is n = round(x·2/π), an integral float.
func (k *kernel) nearestPio2Multiple(x spirv.ID) spirv.ID {
	return k.f.GLSL(spirv.GLSLRoundEven, k.fmul(x, k.fc(x, 2/math.Pi)))
}

// quadrant is n mod 4 for an integral float n, exact below 2^30 (clamped beyond,
// where a lane takes the exact path).
func (k *kernel) quadrant(n spirv.ID) spirv.ID {
	f, m := k.f, k.m
	ni := f.Convert(m.TypeI32(), f.GLSL(spirv.GLSLFClamp, n, k.fc(n, -(1<<30)), k.fc(n, 1<<30)))
	return f.And(f.Bitcast(m.TypeU32(), ni), k.u32(3))
}

// trigReduceExact is the Payne–Hanek reduction of a finite x with |x| >= 2^fastBits.
func (k *kernel) trigReduceExact(x spirv.ID, tf trigFormat) (hi, lo, q spirv.ID) {
	f, m := k.f, k.m
	mw, biased := k.significandWords(x, tf)
	// |x| = M·2^e with e = biased − bias − (mant−1). Bits of 2/π at positions
	// i <= e−2 contribute multiples of 4 to x·2/π; the window starts at bit e−1
	// (position e−1+32·pad in the padded table, counting from 1).
	skip := uint32(tf.bias + tf.mant + 1 - 32*trigPadWords)
	s1 := f.ISub(f.GLSL(spirv.GLSLUMax, biased, k.u32(skip)), k.u32(skip))
	word := f.GLSL(spirv.GLSLUMin, f.ShrL(s1, k.u32(5)), k.u32(uint32(trigTableWords-tf.window-1)))
	sh := f.And(s1, k.u32(31))
	load := k.twoOverPiWords(word, int(uint32(2*tf.bias+1)-skip)>>5)
	// W, the window, least significant word first: W = ⌊2^(e−1+32·window−1)·(2/π)⌋ mod 2^(32·window).
	t := make([]spirv.ID, tf.window+1)
	for i := range t {
		t[i] = load(i)
	}
	w := make([]spirv.ID, tf.window)
	for u := range tf.window {
		w[tf.window-1-u] = k.funnelLeft(t[u], t[u+1], sh)
	}
	// x·2/π mod 4 = M·W·2^(2−32·window): the product's top two bits are the quadrant,
	// the rest the fraction.
	p := k.mulWords(mw, w, tf.window)
	top := p[tf.window-1]
	q = f.ShrL(top, k.u32(30))
	frac := make([]spirv.ID, tf.window)
	for i := range frac {
		prev := k.u32(0)
		if i > 0 {
			prev = f.ShrL(p[i-1], k.u32(30))
		}
		frac[i] = f.Or(f.Shl(p[i], k.u32(2)), prev)
	}
	// A fraction of one half or more rounds to the next quadrant: r = f − 1.
	up := f.Equal(f.ShrL(frac[tf.window-1], k.u32(31)), k.u32(1))
	negated := k.negateWords(frac)
	for i := range frac {
		frac[i] = f.Select(up, negated[i], frac[i])
	}
	q = f.Select(up, f.IAdd(q, k.u32(1)), q)
	hi, lo = k.fixedTimesPio2(frac, m.TypeOf(x), tf)
	hi = f.Select(up, f.FNegate(hi), hi)
	lo = f.Select(up, f.FNegate(lo), lo)
	// sin(−x) = −sin(x): a negative x has quadrant −q and remainder −r.
	neg := k.signBit(x)
	hi = f.Select(neg, f.FNegate(hi), hi)
	lo = f.Select(neg, f.FNegate(lo), lo)
	q = f.Select(neg, f.ISub(k.u32(0), q), q)
	return hi, lo, f.And(q, k.u32(3))
}

// significandWords splits a normal float's integer significand M (implicit bit
// included) into 32-bit words, least significant first, and returns its biased
// exponent.
func (k *kernel) significandWords(x spirv.ID, tf trigFormat) ([]spirv.ID, spirv.ID) {
	f, m := k.f, k.m
	u32 := m.TypeU32()
	if tf.mant == 24 {
		b := f.Bitcast(u32, x)
		biased := f.And(f.ShrL(b, k.u32(23)), k.u32(0xff))
		return []spirv.ID{f.Or(f.And(b, k.u32(0x7fffff)), k.u32(0x800000))}, biased
	}
	v := f.Bitcast(m.TypeVector(u32, 2), x) // component 0 holds the low bits
	lo, hi := f.CompositeExtract(v, 0), f.CompositeExtract(v, 1)
	biased := f.And(f.ShrL(hi, k.u32(20)), k.u32(0x7ff))
	return []spirv.ID{lo, f.Or(f.And(hi, k.u32(0xfffff)), k.u32(0x100000))}, biased
}

// funnelLeft is the high word of (a:b) << s for s in [0, 31] (b's bits shifted in);
// the split shift keeps every shift amount below 32.
func (k *kernel) funnelLeft(a, b, s spirv.ID) spirv.ID {
	f := k.f
	return f.Or(f.Shl(a, s), f.ShrL(f.ShrL(b, k.u32(1)), f.ISub(k.u32(31), s)))
}

// maxSelectedWord is the largest window start read by selects rather than from the
// table.
const maxSelectedWord = 7

// twoOverPiWords returns load(i), word+i of twoOverPi, for word <= maxWord. Where
// maxWord is small (f32: 5) a chain of selects on constants picks the words: lavapipe
// stores a Private array's initialiser for every invocation and gathers a dynamic
// index lane by lane, which cost more than the selects (and it executes this path
// for every element, see trigReduceExact's caller). f64 reads the table.
func (k *kernel) twoOverPiWords(word spirv.ID, maxWord int) func(i int) spirv.ID {
	f := k.f
	if maxWord > maxSelectedWord {
		table := k.twoOverPiTable()
		return func(i int) spirv.ID {
			return f.Load(f.AccessChain(table, f.IAdd(word, k.u32(uint32(i)))))
		}
	}
	words := trigConstants().twoOverPi
	is := make([]spirv.ID, maxWord+1)
	for j := 1; j <= maxWord; j++ {
		is[j] = f.Equal(word, k.u32(uint32(j)))
	}
	return func(i int) spirv.ID {
		v := k.u32(words[i])
		for j := 1; j <= maxWord; j++ {
			v = f.Select(is[j], k.u32(words[j+i]), v)
		}
		return v
	}
}

// twoOverPiTable is a Private array holding twoOverPi, declared once per module.
func (k *kernel) twoOverPiTable() spirv.ID {
	m := k.m
	words := trigConstants().twoOverPi
	parts := make([]spirv.ID, len(words))
	for i, w := range words {
		parts[i] = k.u32(w)
	}
	t := m.TypeArray(m.TypeU32(), uint32(len(words)))
	init := m.ConstComposite(t, parts...)
	if k.tables == nil {
		k.tables = map[spirv.ID]spirv.ID{}
	}
	if v, ok := k.tables[init]; ok {
		return v
	}
	v := m.PrivateTable(t, init, "two_over_pi")
	k.tables[init] = v
	return v
}

// mulWords is the low n words of the product of multiword unsigned integers a and b
// (32-bit words, least significant first), by schoolbook multiplication.
func (k *kernel) mulWords(a, b []spirv.ID, n int) []spirv.ID {
	f, m := k.f, k.m
	u32 := m.TypeU32()
	pair := m.TypeStruct(u32, u32)
	p := make([]spirv.ID, n)
	for i := range p {
		p[i] = k.u32(0)
	}
	addCarry := func(x, y spirv.ID) (sum, carry spirv.ID) {
		r := f.Op(spirv.OpIAddCarry, pair, uint32(x), uint32(y))
		return f.CompositeExtract(r, 0), f.CompositeExtract(r, 1)
	}
	for i, ai := range a {
		carry := k.u32(0)
		for j, bj := range b {
			if i+j >= n {
				break
			}
			prod := f.Op(spirv.OpUMulExtended, pair, uint32(ai), uint32(bj))
			s1, c1 := addCarry(p[i+j], f.CompositeExtract(prod, 0))
			s2, c2 := addCarry(s1, carry)
			p[i+j] = s2
			// ai·bj + p + carry < 2^64, so the high word plus both carries fits.
			carry = f.IAdd(f.CompositeExtract(prod, 1), f.IAdd(c1, c2))
		}
		if i+len(b) < n {
			p[i+len(b)] = f.IAdd(p[i+len(b)], carry)
		}
	}
	return p
}

// negateWords is the two's complement of a multiword integer (least significant
// word first).
func (k *kernel) negateWords(w []spirv.ID) []spirv.ID {
	f, m := k.f, k.m
	pair := m.TypeStruct(m.TypeU32(), m.TypeU32())
	out := make([]spirv.ID, len(w))
	carry := k.u32(1)
	for i, x := range w {
		r := f.Op(spirv.OpIAddCarry, pair, uint32(f.Not(x)), uint32(carry))
		out[i], carry = f.CompositeExtract(r, 0), f.CompositeExtract(r, 1)
	}
	return out
}

// fixedTimesPio2 turns a fraction in [0, 1/2] (words least significant first, the
// binary point above the top word) into r = fraction·π/2 as a float pair of type t.
func (k *kernel) fixedTimesPio2(frac []spirv.ID, t spirv.ID, tf trigFormat) (hi, lo spirv.ID) {
	f, m := k.f, k.m
	n := len(frac)
	// Normalise: shift whole zero words out (the worst f64 cancellation is under 64
	// bits), then the top word's leading zeros.
	lz := k.u32(0)
	for range 2 {
		zero := f.Equal(frac[n-1], k.u32(0))
		shifted := append([]spirv.ID{k.u32(0)}, frac[:n-1]...)
		for i := range frac {
			frac[i] = f.Select(zero, shifted[i], frac[i])
		}
		lz = f.Select(zero, f.IAdd(lz, k.u32(32)), lz)
	}
	msb := f.ExtInst(m.TypeI32(), spirv.GLSLFindUMsb, frac[n-1]) // -1 for 0
	b := f.Bitcast(m.TypeU32(), f.GLSL(spirv.GLSLSClamp, f.ISub(m.I32(31), msb), m.I32(0), m.I32(31)))
	lz = f.IAdd(lz, b)
	a1 := k.funnelLeft(frac[n-1], frac[n-2], b)
	a0 := k.funnelLeft(frac[n-2], frac[n-3], b)
	// (a1:a0)·2^(−64−lz) · (π/2·2^62)·2^−62 = R·2^(−126−lz), R < 2^128.
	c := trigConstants().pio2Fixed
	r := k.mulWords([]spirv.ID{a0, a1}, []spirv.ID{k.u32(c[1]), k.u32(c[0])}, 4)
	// R·2^−64 = r3·2^32 + r2 + r1·2^−32 (+ r0·2^−64, below the pair's precision):
	// the top word's high bits exactly, the rest as the low part.
	mask := uint32(0xffffffff)
	if tf.mant < 32 {
		mask <<= 32 - tf.mant
	}
	toF := func(v spirv.ID) spirv.ID { return f.Convert(t, v) }
	p32 := m.ConstFloat(t, 0x1p32)
	m32 := m.ConstFloat(t, 0x1p-32)
	top := k.fmul(toF(f.And(r[3], k.u32(mask))), p32)
	rest := k.fadd(k.fadd(k.fmul(toF(f.And(r[3], k.u32(^mask))), p32), toF(r[2])), k.fmul(toF(r[1]), m32))
	hi, lo = k.fastTwoSum(top, rest)
	e := f.ISub(m.I32(-62), f.Bitcast(m.TypeI32(), lz))
	return f.ExtInst(t, spirv.GLSLLdexp, hi, e), f.ExtInst(t, spirv.GLSLLdexp, lo, e)
}

// sinCosPoly is sin(hi+lo), or cos, shifted by quadrant q (sin(r + q·π/2)): Taylor
// polynomials in z = hi², with lo's first-order terms.
func (k *kernel) sinCosPoly(hi, lo, q spirv.ID, cos bool, tf trigFormat) spirv.ID {
	f := k.f
	one := k.fc(hi, 1)
	sinC, _ := taylorSinCos(tf.sinTerms)
	_, cosC := taylorSinCos(tf.cosTerms)
	z := k.fmul(hi, hi)
	// sin(hi+lo) ≈ hi + (hi·z·S(z) + lo·(1 − z/2)).
	s := k.fadd(hi, k.fadd(k.fmul(k.fmul(hi, z), k.horner(z, sinC)), k.fmul(lo, k.fsub(one, k.fmul(z, k.fc(hi, 0.5))))))
	// cos(hi+lo) ≈ 1 + (z·C(z) − hi·lo).
	c := k.fadd(one, k.fsub(k.fmul(z, k.horner(z, cosC)), k.fmul(hi, lo)))
	if cos {
		q = f.IAdd(q, k.u32(1))
	}
	odd := f.Equal(f.And(q, k.u32(1)), k.u32(1))
	v := f.Select(odd, c, s)
	return f.Select(f.Equal(f.And(q, k.u32(2)), k.u32(2)), f.FNegate(v), v)
}
