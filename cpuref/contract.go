package cpuref

import (
	"runtime"

	"github.com/vkxla/vkxla/hlo"
	"sync"
	"sync/atomic"
)

// A contraction (dot, convolution) is evaluated as independent matrix products, one
// per group (a dot's batch index, a convolution's feature or batch group):
//
//	out[outIndex(g, r, n)] = Σ_t lhs[l_t] · rhs[rhsIndex(g, k_t, n)]
//
// over the terms (l_t, k_t) that terms(g, r) lists for row r, in that order. The
// sum for one output element is exactly the serial loop's: the same products,
// added one at a time in the same order, each rounded as macOperands.add rounds it
// (dot.go). Only independent output elements are computed together: columns n side
// by side in SIMD lanes, rows and column panels on different cores. The contracting
// axis is cut into blocks of kBlock positions; the partial sums stay in the
// accumulation type between blocks, which is what the serial loop holds too.
type contraction struct {
	groups, rows, cols, depth int
	rhsIndex                  func(g, k, n int) int64
	outIndex                  func(g, r, n int) int
	// terms appends row r's terms: lhs element indices and contracting positions
	// (ascending).
	terms func(g, r int, l []int64, k []int32) ([]int64, []int32)
}

// mac is an accumulation type (accKind's Go types).
type mac interface{ float32 | float64 | int64 }

const (
	wideLanes   = 64  // columns of a packed rhs panel
	narrowLanes = 8   // the panel width for at most narrowCols columns
	narrowCols  = 32  //
	rowBlock    = 16  // rows of one job
	kBlock      = 128 // contracting positions per pass over a panel (a 32 KiB f32 panel block)
	serialWork  = 1 << 16
)

// lanes is the packed panel width for cols columns.
func (c *contraction) lanes() int {
	if c.cols <= narrowCols {
		return narrowLanes
	}
	return wideLanes
}

// packedLen is the number of elements of the packed rhs (scratch space).
func (c *contraction) packedLen() int64 {
	return packedLen(int64(c.groups), int64(c.cols), int64(c.depth))
}

func packedLen(groups, cols, depth int64) int64 {
	nr := int64(wideLanes)
	if cols <= narrowCols {
		nr = narrowLanes
	}
	return groups * ((cols + nr - 1) / nr * nr) * depth
}

// kernelFunc adds one row's terms into acc[:nr]: acc[j] += a[t] · b[k[t]*nr + j].
type kernelFunc[T mac] func(acc, a []T, k []int32, b []T, nr int)

// macKernel is the portable kernel: one rounded product and one rounded sum per
// term and lane, in term order. The conversion keeps the compiler from fusing them.
func macKernel[T mac](acc, a []T, k []int32, b []T, nr int) {
	acc = acc[:nr]
	for t, av := range a {
		row := b[int(k[t])*nr:][:nr]
		for j := range acc {
			acc[j] += T(av * row[j])
		}
	}
}

// runContraction evaluates c on every core. lhs is the decoded lhs, rhs reads one
// rhs element in the accumulation type, store writes one result element. It returns
// early (with a partial result) once the evaluation is cancelled.
func runContraction[T mac](ev *evaluator, c *contraction, lhs []T, rhs func(i int64) T, store func(i int, v T), kern kernelFunc[T]) {
	if c.groups == 0 || c.rows == 0 || c.cols == 0 {
		return
	}
	nr := c.lanes()
	panels := (c.cols + nr - 1) / nr
	packed := packRhs(c, rhs, nr, panels)
	rowBlocks := (c.rows + rowBlock - 1) / rowBlock
	workers := runtime.GOMAXPROCS(0)
	if int64(c.groups)*int64(c.rows)*int64(c.cols)*int64(max(c.depth, 1)) < serialWork {
		workers = 1
	}
	// Enough jobs to keep every core busy: split the column panels if rows are few.
	chunk := panels
	if jobs := c.groups * rowBlocks; jobs < 4*workers {
		chunk = max(1, panels*jobs/(4*workers))
	}
	chunks := (panels + chunk - 1) / chunk
	total := int64(c.groups) * int64(rowBlocks) * int64(chunks)
	var next atomic.Int64
	work := func() {
		s := newContractionScratch[T](chunk * nr)
		for {
			j := next.Add(1) - 1
			if j >= total || (ev != nil && ev.stop.Load()) {
				return
			}
			g, rest := int(j/int64(rowBlocks*chunks)), int(j%int64(rowBlocks*chunks))
			rb, pc := rest/chunks, rest%chunks
			s.job(c, lhs, packed, store, kern, g, rb*rowBlock, min(c.rows, (rb+1)*rowBlock), pc*chunk, min(panels, (pc+1)*chunk), nr, panels)
		}
	}
	workers = int(min(int64(workers), total))
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// packRhs lays each group's rhs out as panels of nr columns, [group][panel][k][lane],
// zero past the last column.
func packRhs[T mac](c *contraction, rhs func(i int64) T, nr, panels int) []T {
	packed := make([]T, c.packedLen())
	parallelFor(c.groups*panels, c.depth*nr, func(lo, hi int) {
		for gp := lo; gp < hi; gp++ {
			g, p := gp/panels, gp%panels
			base := gp * c.depth * nr
			for k := range c.depth {
				row := packed[base+k*nr : base+(k+1)*nr]
				for j := range row {
					if n := p*nr + j; n < c.cols {
						row[j] = rhs(c.rhsIndex(g, k, n))
					}
				}
			}
		}
	})
	return packed
}

// parallelFor calls f on consecutive ranges of [0, n) on every core, or on one for
// little work (n items of about cost elementary steps each).
func parallelFor(n, cost int, f func(lo, hi int)) { parallelForAligned(n, cost, 1, f) }

// parallelElements is parallelFor over the elements of a result of shape out:
// where out's elements are packed (s4, u2, …), every range but the last starts and
// ends on a byte, so that no two workers write one byte.
func parallelElements(out hlo.Shape, cost int, f func(lo, hi int)) {
	align := 1
	if out.DType.IsSubByte() {
		align = 8 // a whole number of bytes for 1-, 2- and 4-bit elements
	}
	parallelForAligned(int(out.NumElements()), cost, align, f)
}

// parallelForAligned is parallelFor with ranges whose starts are multiples of align.
func parallelForAligned(n, cost, align int, f func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if int64(n)*int64(max(cost, 1)) < serialWork || workers == 1 || n < 2 {
		f(0, n)
		return
	}
	chunk := max(1, n/(4*workers))
	chunk = (chunk + align - 1) / align * align
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, (n+chunk-1)/chunk) {
		wg.Go(func() {
			for {
				lo := int(next.Add(int64(chunk))) - chunk
				if lo >= n {
					return
				}
				f(lo, min(n, lo+chunk))
			}
		})
	}
	wg.Wait()
}

// contractionScratch is one worker's memory: a row block's terms and accumulators.
type contractionScratch[T mac] struct {
	l     []int64
	a     [rowBlock][]T
	k     [rowBlock][]int32
	acc   []T
	width int // accumulator elements per row (panels of a chunk × lanes)
}

func newContractionScratch[T mac](width int) *contractionScratch[T] {
	return &contractionScratch[T]{acc: make([]T, rowBlock*width), width: width}
}

// job computes rows [r0, r1) of group g over column panels [p0, p1).
func (s *contractionScratch[T]) job(c *contraction, lhs, packed []T, store func(int, T), kern kernelFunc[T],
	g, r0, r1, p0, p1, nr, panels int) {
	for i := range r1 - r0 {
		s.l, s.k[i] = c.terms(g, r0+i, s.l[:0], s.k[i][:0])
		s.a[i] = s.a[i][:0]
		for _, l := range s.l {
			s.a[i] = append(s.a[i], lhs[l])
		}
	}
	acc := s.acc[:(r1-r0)*s.width]
	clear(acc)
	var starts [rowBlock]int // each row's first term of the block
	for k0 := 0; k0 < c.depth; k0 += kBlock {
		var ends [rowBlock]int
		for i := range r1 - r0 {
			e := starts[i]
			for e < len(s.k[i]) && int(s.k[i][e]) < k0+kBlock {
				e++
			}
			ends[i] = e
		}
		for p := p0; p < p1; p++ {
			b := packed[(g*panels+p)*c.depth*nr:][:c.depth*nr]
			for i := range r1 - r0 {
				if starts[i] < ends[i] {
					kern(acc[i*s.width+(p-p0)*nr:], s.a[i][starts[i]:ends[i]], s.k[i][starts[i]:ends[i]], b, nr)
				}
			}
		}
		starts = ends
	}
	for i := range r1 - r0 {
		for p := p0; p < p1; p++ {
			for j := range nr {
				if n := p*nr + j; n < c.cols {
					store(c.outIndex(g, r0+i, n), acc[i*s.width+(p-p0)*nr+j])
				}
			}
		}
	}
}

// packedRhsLen is the packed rhs's length for a dot or convolution instruction in
// with rhs shape rs (0 where the attributes are missing: the kernel then fails).
func packedRhsLen(in *hlo.Instruction, rs hlo.Shape) int64 {
	prod := func(dims []int64) int64 {
		n := int64(1)
		for _, d := range dims {
			n *= d
		}
		return n
	}
	if in.Op == hlo.OpConvolution {
		dn := in.Attrs.Conv
		if dn == nil || !validDims(rs, dn.KernelOutput, dn.KernelInput) || !validDims(rs, dn.KernelSpatial...) {
			return 0
		}
		o := rs.Dims[dn.KernelOutput]
		fgc, bgc := groupCount(in.Attrs.FeatureGroupCount), groupCount(in.Attrs.BatchGroupCount)
		if o%fgc != 0 || o%bgc != 0 {
			return 0
		}
		w := gcd(o/fgc, o/bgc)
		if w == 0 {
			return 0
		}
		return packedLen(o/w, w, rs.Dims[dn.KernelInput]*prod(pick(rs.Dims, dn.KernelSpatial)))
	}
	dn := in.Attrs.Dot
	if dn == nil {
		dn = &hlo.DotDims{RhsContracting: []int64{0}}
	}
	if !validDims(rs, dn.RhsBatch...) || !validDims(rs, dn.RhsContracting...) {
		return 0
	}
	free := hlo.Complement(rs.Rank(), dn.RhsBatch, dn.RhsContracting)
	return packedLen(prod(pick(rs.Dims, dn.RhsBatch)), prod(pick(rs.Dims, free)), prod(pick(rs.Dims, dn.RhsContracting)))
}

func validDims(s hlo.Shape, dims ...int64) bool {
	for _, d := range dims {
		if d < 0 || int(d) >= s.Rank() {
			return false
		}
	}
	return true
}
