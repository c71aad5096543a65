package vkxla

import (
	"fmt"
	"strings"
	"time"
)

// KernelTime is the GPU time of one instruction's dispatches in the last Run.
type KernelTime struct {
	Instruction string
	Dispatches  int // how many dispatches (loop iterations and multi-pass kernels add up)
	GPUTime     time.Duration
}

// Profile is the per-kernel GPU time of an executable's last Run, from timestamp
// queries around every dispatch, in order of first execution.
type Profile struct {
	Kernels []KernelTime
	index   map[string]int
}

// Total is the sum of the kernels' GPU times.
func (p Profile) Total() time.Duration {
	var t time.Duration
	for _, k := range p.Kernels {
		t += k.GPUTime
	}
	return t
}

func (p Profile) String() string {
	var sb strings.Builder
	for _, k := range p.Kernels {
		fmt.Fprintf(&sb, "%-40s %4d× %v\n", k.Instruction, k.Dispatches, k.GPUTime)
	}
	fmt.Fprintf(&sb, "%-40s       %v\n", "total", p.Total())
	return sb.String()
}

// collect adds the timestamps of a segment that has just completed.
func (p *Profile) collect(seg *segment) error {
	if len(seg.dispatches) == 0 || !seg.timed {
		return nil
	}
	ts, err := seg.cb.Timestamps()
	if err != nil {
		return err
	}
	for i, name := range seg.dispatches {
		p.add(name, ts[2*i+1]-ts[2*i])
	}
	return nil
}

func (p *Profile) add(name string, d time.Duration) {
	if p.index == nil {
		p.index = map[string]int{}
	}
	i, ok := p.index[name]
	if !ok {
		i = len(p.Kernels)
		p.index[name] = i
		p.Kernels = append(p.Kernels, KernelTime{Instruction: name})
	}
	p.Kernels[i].Dispatches++
	p.Kernels[i].GPUTime += d
}

// Profile returns the per-kernel GPU times of the last Run (empty before the first
// Run, or when profiling is off).
func (e *Executable) Profile() Profile {
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	p := e.c.profile
	p.Kernels = append([]KernelTime(nil), p.Kernels...)
	p.index = nil
	return p
}
