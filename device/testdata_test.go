package device_test

import _ "embed"

//go:generate glslc -O --target-env=vulkan1.1 -o testdata/add.spv testdata/add.comp
//go:generate glslc -O --target-env=vulkan1.1 -o testdata/addr.spv testdata/addr.comp
//go:generate glslc -O --target-env=vulkan1.1 -o testdata/inc.spv testdata/inc.comp
//go:generate glslc -O --target-env=vulkan1.1 -o testdata/spin.spv testdata/spin.comp

// addSPV: c[i] = a[i]*scale + b[i] + bias (spec constants: 0 workgroup size, 1 scale;
// push constants: n uint32, bias float32).
//
//go:embed testdata/add.spv
var addSPV []byte

// addrSPV: x[i] += 1 for i < n, x reached through the device address in word 0 of
// binding 0 (a u64 table), not through a binding of its own (push constant n;
// workgroup size 64).
//
//go:embed testdata/addr.spv
var addrSPV []byte

// incSPV: x[i] += 1 for i < n (push constant n; workgroup size 64).
//
//go:embed testdata/inc.spv
var incSPV []byte

// spinSPV: x[i] = LCG^iters(x[i]) (push constant iters, below 65535: lavapipe's loop
// limit; workgroup size 64).
//
//go:embed testdata/spin.spv
var spinSPV []byte
