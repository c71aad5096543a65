package heapsim

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/vkxla/vkxla/alloc"
)

// MemoryStats is the device memory an executable holds, fixed at compile time: the
// arena plan is allocated once and every buffer has its place in it, so PeakBytes
// is stated before anything runs.
type MemoryStats struct {
	// PeakBytes is the executable's whole device memory: the plan's blocks.
	PeakBytes int64
	// By role (sums of buffer sizes, before alignment). A buffer written in place
	// over another counts in its own role too. Parameters in the caller's memory
	// count in DonatedBytes or BorrowedBytes instead of ParameterBytes.
	ParameterBytes int64
	OutputBytes    int64
	ConstantBytes  int64
	TemporaryBytes int64
	// InPlaceBytes is the size of the buffers written in place over another
	// buffer, which need no memory of their own.
	InPlaceBytes int64
	// LowerBoundBytes is the most memory the buffers live at one moment need
	// (aligned): no placement of them in this order of kernels can use less.
	// PeakBytes exceeds it only by what packing could not fit.
	LowerBoundBytes int64
	// Buffers counts the buffers with memory of their own in the arena.
	Buffers int
	// DonatedBytes and BorrowedBytes are the parameter leaves in the caller's
	// memory (heapsim/alias.go): donated, or read in place. The executable holds
	// none of them (PeakBytes leaves them out).
	DonatedBytes, BorrowedBytes int64
	// HostBytes is the host memory the executable holds for offloaded values
	// (MoveToHost): the host plan's blocks, apart from PeakBytes; HostBuffers
	// counts them. Their sizes count in no role above.
	HostBytes   int64
	HostBuffers int
}

func (s MemoryStats) String() string {
	text := fmt.Sprintf("peak %d B, lower bound %d B (parameters %d, outputs %d, constants %d, temporaries %d, in place %d; %d buffers)",
		s.PeakBytes, s.LowerBoundBytes, s.ParameterBytes, s.OutputBytes, s.ConstantBytes, s.TemporaryBytes, s.InPlaceBytes, s.Buffers)
	if s.DonatedBytes > 0 || s.BorrowedBytes > 0 {
		text += fmt.Sprintf("; the caller's: donated %d, borrowed %d", s.DonatedBytes, s.BorrowedBytes)
	}
	if s.HostBuffers > 0 {
		text += fmt.Sprintf("; host memory %d B (%d offloaded buffers)", s.HostBytes, s.HostBuffers)
	}
	return text
}

func memoryStats(l *lowering) MemoryStats {
	s := MemoryStats{PeakBytes: alignedTotal(l.arenaPlan(), l.limits), LowerBoundBytes: l.liveBound,
		HostBytes: alignedTotal(l.hostPlan(), l.limits), HostBuffers: len(l.hostOwners())}
	for i, r := range l.plan.Ranges {
		if l.onHost(i) {
			continue
		}
		switch {
		case l.shares[i] >= 0:
			s.InPlaceBytes += r.Size
		case l.ext[i] == extNone && !l.isToken(i):
			s.Buffers++
		}
		switch {
		case l.kinds[i] == rangeParam && l.ext[i] == extDonated:
			s.DonatedBytes += r.Size
		case l.kinds[i] == rangeParam && l.ext[i] == extBorrowed:
			s.BorrowedBytes += r.Size
		case l.kinds[i] == rangeParam:
			s.ParameterBytes += r.Size
		case l.kinds[i] == rangeOutput:
			s.OutputBytes += r.Size
		case l.kinds[i] == rangeConstant:
			s.ConstantBytes += r.Size
		default:
			s.TemporaryBytes += r.Size
		}
	}
	return s
}

// alignedTotal is what the arena allocates for the plan: each block rounded up to
// the alignment.
func alignedTotal(p alloc.Plan, l alloc.Limits) int64 {
	var total int64
	for _, size := range alignedBlocks(p, l) {
		total += size
	}
	return total
}

// alignedBlocks is the size of each device allocation the arena makes for the plan.
func alignedBlocks(p alloc.Plan, l alloc.Limits) []int64 {
	sizes := p.BlockSizes()
	for i, size := range sizes {
		sizes[i] = (size + l.Alignment - 1) / l.Alignment * l.Alignment
	}
	return sizes
}

// LiveBuffer is a buffer live when the executable's live bytes peak.
type LiveBuffer struct {
	// Name is the instruction (or parameter) whose Value the buffer holds; a loop's
	// state is "<while>.state", a kernel's scratch "<instruction>.scratch<i>".
	Name  string
	Bytes int64
	// Role is "parameter", "output", "constant" or "temporary".
	Role string
	// InPlace names the values later written over this buffer (in-place outputs).
	InPlace []string
}

func (b LiveBuffer) String() string {
	s := fmt.Sprintf("%s %d B (%s)", b.Name, b.Bytes, b.Role)
	if len(b.InPlace) > 0 {
		s += ", then " + strings.Join(b.InPlace, ", ")
	}
	return s
}

// livePeak lists the buffers live at the plan's peak moment, largest first.
func livePeak(l *lowering) []LiveBuffer {
	var out []LiveBuffer
	for _, r := range l.livePeak {
		pr := l.plan.Ranges[r]
		b := LiveBuffer{Name: pr.Name, Bytes: pr.Size, Role: l.kinds[r].String()}
		for s := range l.plan.Ranges {
			if l.shares[s] >= 0 && l.owner(s) == r {
				b.InPlace = append(b.InPlace, l.plan.Ranges[s].Name)
			}
		}
		out = append(out, b)
	}
	slices.SortStableFunc(out, func(a, b LiveBuffer) int { return cmp.Compare(b.Bytes, a.Bytes) })
	return out
}

// Largest describes the first n buffers of a list, for messages.
func Largest(bs []LiveBuffer, n int) string {
	var parts []string
	for _, b := range bs[:min(n, len(bs))] {
		parts = append(parts, b.String())
	}
	return strings.Join(parts, "; ")
}
