// Package cases holds the collective test modules that the reference
// interpreter (cpuref), the replicated runtime (the root package) and the MPI
// runtime (mpi) all run: HLO texts for several devices, and for the loop
// fixtures each device's result worked out by hand from the ops' definitions.
// The runtimes' tests check every Case against cpuref.EvalReplicas on random
// inputs; cpuref's tests check the fixtures against the builders here.
package cases

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// Reducers are the computations the cases' to_apply name: add and max of f32,
// and of pred. Every case's entry text follows them.
const Reducers = `HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
and {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT s = pred[] and(a, b)
}
`

// Parse parses an entry (and the computations it calls) after Reducers.
func Parse(entry string) (*hlo.Module, error) {
	m, err := hlo.ParseModule(Reducers + entry)
	if err != nil {
		return nil, fmt.Errorf("collective case: %w", err)
	}
	return m, nil
}

// Case is one module for a run on Replicas × Partitions devices.
type Case struct {
	Name                 string
	Replicas, Partitions int
	Entry                string // after Reducers
	// Exact: collectives (computed on the host with cpuref's reducer) and exact
	// ops only, so a runtime must give cpuref's bits; otherwise its kernels are
	// checked within the program tolerance.
	Exact bool
}

// Devices is the number of devices the case runs on.
func (c Case) Devices() int { return c.Replicas * c.Partitions }

// Module parses the case.
func (c Case) Module() (*hlo.Module, error) {
	m, err := Parse(c.Entry)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	return m, nil
}

// On returns the cases for n devices.
func On(n int) []Case {
	var out []Case
	for _, c := range Collectives {
		if c.Devices() == n {
			out = append(out, c)
		}
	}
	return out
}
