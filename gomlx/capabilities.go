package gomlx

import (
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// notImplementedOps are the ops of GoMLX's builder interface that return
// GoMLX's not-implemented error (the embedded notimplemented.Builder answers
// them): vkxla compiles no complex kernels yet (hlo and cpuref have c64 and
// c128; the GPU refuses them), and a backend is one device.
// docs/gomlx.md explains each.
var notImplementedOps = map[backends.OpType]bool{
	backends.OpTypeComplex: true, backends.OpTypeConj: true, backends.OpTypeReal: true,
	backends.OpTypeImag: true, backends.OpTypeFFT: true,
	backends.OpTypeAllReduce: true, backends.OpTypeCollectiveBroadcast: true, backends.OpTypeAllGather: true,
	// Not methods of the builder interface in v0.26.0 (listed by OpType only).
	backends.OpTypeBroadcast: true, backends.OpTypeSelectAndScatterSum: true,
}

// capabilities lists every other op type, and the element types dtypePairs maps.
var capabilities = func() backends.Capabilities {
	c := backends.Capabilities{Operations: map[backends.OpType]bool{}, DTypes: map[dtypes.DType]bool{}}
	for op := backends.OpTypeParameter; op < backends.OpTypeLast; op++ {
		if !notImplementedOps[op] {
			c.Operations[op] = true
		}
	}
	for _, p := range dtypePairs {
		c.DTypes[p.g] = true
	}
	return c
}()
