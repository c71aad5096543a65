package vkxla

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/vkxla/vkxla/hlo"
)

// The RNG state of rng and rng-get-and-update-state (docs/runtime.md). The
// rng-state pass makes it the optimized entry's last parameter, a u64[2] 128-bit
// counter {low, high}; each Executable handle keeps its own, feeds it to every run
// and advances it by the run's draws (hlo.EntryRngStateDelta). So two runs of one
// handle draw different numbers, two handles of one cached compilation draw
// independent streams (each starts at a random seed), and SeedRng makes a handle's
// draws reproducible. The state is not part of the compiled program: the compile
// cache shares the program, never the state.

// rngStream is one handle's state; runs read and advance it holding c.mu.
type rngStream struct {
	ready bool      // state holds a seed's state
	state [2]uint64 // where the next run's draws start
}

// SeedRng restarts the handle's RNG state at seed's (hlo.RngSeedState): the runs
// that follow draw what the same runs of any handle seeded alike draw, and what
// cpuref.Limits.EvalWithRngState draws from hlo.RngSeedState(seed). A handle never
// seeded starts at a random seed. Programs without rng ignore it.
func (e *Executable) SeedRng(seed uint64) error {
	return e.setRngState(hlo.RngSeedState(seed))
}

// RngState returns the RNG state the handle's next run starts from.
func (e *Executable) RngState() ([2]uint64, error) {
	if err := e.checkOpen(); err != nil {
		return [2]uint64{}, err
	}
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	e.rng.init()
	return e.rng.state, nil
}

func (e *Executable) setRngState(s [2]uint64) error {
	if err := e.checkOpen(); err != nil {
		return err
	}
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	e.rng = rngStream{ready: true, state: s}
	return nil
}

func (r *rngStream) init() {
	if !r.ready {
		*r = rngStream{ready: true, state: hlo.RngSeedState(rand.Uint64())}
	}
}

// stageRngState writes the handle's state into the state parameter, when the
// program has one (it follows the caller's inputs), and advances the handle's
// state past the run's draws. The caller holds c.mu.
func (e *Executable) stageRngState(ctx context.Context) error {
	c := e.c
	n := len(c.module.Entry.Params)
	if len(c.params) == n {
		return nil
	}
	if len(c.params) != n+1 || !c.optimized.Entry.Params[n].Shape.Equal(hlo.RngStateShape) {
		return fmt.Errorf("internal error: the optimized entry has %d parameters for %d inputs, the last not the u64[2] RNG state", len(c.params), n)
	}
	e.rng.init()
	lit := hlo.MustFromSlice([]int64{2}, e.rng.state[:])
	if err := c.uploadLiteral(ctx, c.params[n], lit); err != nil {
		return fmt.Errorf("RNG state: %w", err)
	}
	e.rng.state = hlo.AdvanceRngState(e.rng.state, hlo.EntryRngStateDelta(c.module))
	return nil
}
