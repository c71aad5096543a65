package cpuref

import (
	"encoding/binary"

	"github.com/vkxla/vkxla/hlo"
)

// Bulk element access. The maps, gathers and reductions move raw element bits in
// blocks and through readers specialised to the element width once per literal,
// instead of deciding the width again for every element (hlo.Literal.Bits does):
// on the big models that is most of an elementwise op's time. The bits are the
// same, so results are unchanged.

// blockLen is the number of elements a worker decodes, computes and encodes at a time.
const blockLen = 256

// wholeByteWidth is the byte width of dt's elements where each occupies 1, 2, 4 or
// 8 whole bytes, else 0 (a token, or a packed type): those go element by element
// through hlo.Literal.
func wholeByteWidth(dt hlo.DType) int {
	s := dt.Size()
	if s*8 != dt.Bits() {
		return 0
	}
	switch s {
	case 1, 2, 4, 8:
		return s
	}
	return 0
}

// bitsReader returns a function reading element i's raw bits of l.
func bitsReader(l *hlo.Literal) func(i int) uint64 {
	b := l.Bytes()
	switch wholeByteWidth(l.DType()) {
	case 1:
		return func(i int) uint64 { return uint64(b[i]) }
	case 2:
		return func(i int) uint64 { return uint64(binary.LittleEndian.Uint16(b[2*i:])) }
	case 4:
		return func(i int) uint64 { return uint64(binary.LittleEndian.Uint32(b[4*i:])) }
	case 8:
		return func(i int) uint64 { return binary.LittleEndian.Uint64(b[8*i:]) }
	}
	return l.Bits
}

// readBits copies the raw bits of elements lo, lo+1, … of l into dst.
func readBits(l *hlo.Literal, lo int, dst []uint64) {
	b := l.Bytes()
	switch w := wholeByteWidth(l.DType()); w {
	case 1:
		for i, v := range b[lo : lo+len(dst)] {
			dst[i] = uint64(v)
		}
	case 2:
		s := b[2*lo : 2*(lo+len(dst))]
		for i := range dst {
			dst[i] = uint64(binary.LittleEndian.Uint16(s[2*i:]))
		}
	case 4:
		s := b[4*lo : 4*(lo+len(dst))]
		for i := range dst {
			dst[i] = uint64(binary.LittleEndian.Uint32(s[4*i:]))
		}
	case 8:
		s := b[8*lo : 8*(lo+len(dst))]
		for i := range dst {
			dst[i] = binary.LittleEndian.Uint64(s[8*i:])
		}
	default:
		for i := range dst {
			dst[i] = l.Bits(lo + i)
		}
	}
}

// writeBits stores src as the raw bits of elements lo, lo+1, … of l.
func writeBits(l *hlo.Literal, lo int, src []uint64) {
	b := l.Bytes()
	switch wholeByteWidth(l.DType()) {
	case 1:
		s := b[lo : lo+len(src)]
		for i, v := range src {
			s[i] = byte(v)
		}
	case 2:
		s := b[2*lo : 2*(lo+len(src))]
		for i, v := range src {
			binary.LittleEndian.PutUint16(s[2*i:], uint16(v))
		}
	case 4:
		s := b[4*lo : 4*(lo+len(src))]
		for i, v := range src {
			binary.LittleEndian.PutUint32(s[4*i:], uint32(v))
		}
	case 8:
		s := b[8*lo : 8*(lo+len(src))]
		for i, v := range src {
			binary.LittleEndian.PutUint64(s[8*i:], v)
		}
	default:
		for i, v := range src {
			l.SetBits(lo+i, v)
		}
	}
}

// unravel is the row-major index of linear position p in dims.
func unravel(dims []int64, p int64) []int64 {
	idx := make([]int64, len(dims))
	for d := len(dims) - 1; d >= 0; d-- {
		if dims[d] > 0 {
			idx[d] = p % dims[d]
			p /= dims[d]
		}
	}
	return idx
}
