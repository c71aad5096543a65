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

// ranSegment is one execution of a timed segment in the last Run. Times holds its
// dispatches' GPU times when they had to be read at once (a repeated segment);
// otherwise they are read from the command buffer when Profile asks, which keeps
// the query read-back off the Run path.
type ranSegment struct {
	seg   *segment
	times []time.Duration
}

// noteRan records that seg has just completed.
func (c *compiled) noteRan(seg *segment) error {
	if !seg.timed || len(seg.dispatches) == 0 {
		return nil
	}
	r := ranSegment{seg: seg}
	if seg.repeated {
		var err error
		if r.times, err = dispatchTimes(seg); err != nil {
			return err
		}
	}
	c.ran = append(c.ran, r)
	return nil
}

// dispatchTimes reads the GPU time of each dispatch of seg's last submission.
func dispatchTimes(seg *segment) ([]time.Duration, error) { return seg.cb.DispatchTimes() }

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
func (e *Executable) Profile() (Profile, error) {
	if err := e.checkOpen(); err != nil {
		return Profile{}, err
	}
	c := e.c
	if err := c.rt.enter(); err != nil {
		return Profile{}, fmt.Errorf("vkxla: Profile %s: %w", c.module.Name, err)
	}
	defer c.rt.exit()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return Profile{}, fmt.Errorf("vkxla: Profile %s: the runtime is closed (%w)", c.module.Name, ErrClosed)
	}
	var p Profile
	for _, r := range c.ran {
		times := r.times
		if times == nil {
			var err error
			if times, err = dispatchTimes(r.seg); err != nil {
				return Profile{}, fmt.Errorf("vkxla: Profile %s: %w", c.module.Name, err)
			}
		}
		for i, name := range r.seg.dispatches {
			p.add(name, times[i])
		}
	}
	p.index = nil
	return p, nil
}
