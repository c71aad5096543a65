package alloc

import "fmt"

// BindingChunk is the size of every binding but the last when a range is split by
// Bindings: the largest multiple of both the alignment (so each next binding's
// offset stays aligned) and granule (so no element — or vec4 — straddles two
// bindings) that fits in MaxBindingRange. It returns 0 when no such size exists.
func (l Limits) BindingChunk(granule int64) int64 {
	if granule <= 0 {
		granule = 1
	}
	step := lcm(l.Alignment, granule)
	if step <= 0 || step > l.MaxBindingRange {
		return 0
	}
	return l.MaxBindingRange / step * step
}

// Bindings returns the storage-buffer bindings that together cover r, in order:
// each starts at an aligned offset and covers at most MaxBindingRange bytes, and
// all but the last have size BindingChunk(granule). A range that fits in one binding
// comes back as itself. An empty range needs no binding and returns none.
//
// The code generator uses it to decide whether a tensor is bound whole, split
// across several bindings (element i lives in binding i*elemSize/chunk), or
// rejected with the error returned here.
func (l Limits) Bindings(r Span, granule int64) ([]Span, error) {
	if err := l.checkBindable(r); err != nil {
		return nil, err
	}
	if r.Size == 0 {
		return nil, nil
	}
	if r.Size <= l.MaxBindingRange {
		return []Span{r}, nil
	}
	chunk := l.BindingChunk(granule)
	if chunk == 0 {
		return nil, fmt.Errorf("%w: range %v cannot be split: granule %d with alignment %d exceeds the max binding range %d",
			ErrBindingTooLarge, r, granule, l.Alignment, l.MaxBindingRange)
	}
	out := make([]Span, 0, (r.Size+chunk-1)/chunk)
	for off := r.Offset; off < r.End(); off += chunk {
		out = append(out, Span{Offset: off, Size: min(chunk, r.End()-off)})
	}
	return out, nil
}

// checkBindable rejects what no binding can start at: negative values, a
// misaligned offset, a range that would not fit in any memory block.
func (l Limits) checkBindable(r Span) error {
	if err := l.Validate(); err != nil {
		return err
	}
	switch {
	case r.Offset < 0 || r.Size < 0:
		return fmt.Errorf("%w: range %v has a negative offset or size", ErrInvalid, r)
	case r.Offset%l.Alignment != 0:
		return fmt.Errorf("%w: range %v: offset %d is not a multiple of %d", ErrMisaligned, r, r.Offset, l.Alignment)
	case r.End() > l.MaxBlockSize:
		return fmt.Errorf("%w: range %v ends at %d, past the max block size %d", ErrBlockTooLarge, r, r.End(), l.MaxBlockSize)
	}
	return nil
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// lcm returns the least common multiple, or -1 on overflow.
func lcm(a, b int64) int64 {
	q := a / gcd(a, b)
	if q > (1<<62)/b {
		return -1
	}
	return q * b
}
