// Package mpi is a small cgo binding of MPI (OpenMPI, Debian's libopenmpi-dev) for
// vkxla's runs across processes: one process per device, launched with mpirun.
// It offers what the collectives need over MPI_COMM_WORLD — Init, Rank, Size,
// AllGather of byte strings, Barrier, Finalize — and a World implements
// vkxla.ProcessGroup, so vkxla.CompileDistributed runs a program's device of
// this rank (docs/replicas.md, "Across processes: MPI").
//
// MPI is initialised once per process, with MPI_THREAD_FUNNELED: every MPI call
// runs on one OS thread that Init locks, so goroutines may use a World from any
// thread, one call at a time (World serialises them). MPI's errors are returned
// (MPI_ERRORS_RETURN on MPI_COMM_WORLD) as Go errors with MPI's message.
package mpi

/*
#cgo pkg-config: ompi-c
#include <mpi.h>
#include <stdlib.h>

static int vk_init(void) {
	int provided = 0;
	int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
	if (rc != MPI_SUCCESS) return rc;
	if (provided < MPI_THREAD_FUNNELED) return -1;
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}
static int vk_rank(int *r) { return MPI_Comm_rank(MPI_COMM_WORLD, r); }
static int vk_size(int *n) { return MPI_Comm_size(MPI_COMM_WORLD, n); }
static int vk_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }
static int vk_finalize(void) { return MPI_Finalize(); }
static int vk_allgather_len(long long mine, long long *all) {
	return MPI_Allgather(&mine, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, MPI_COMM_WORLD);
}
static int vk_allgatherv(void *send, int n, void *recv, int *counts, int *displs) {
	return MPI_Allgatherv(send, n, MPI_BYTE, recv, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
}
static void vk_error_string(int code, char *buf, int *len) {
	if (MPI_Error_string(code, buf, len) != MPI_SUCCESS) *len = 0;
}
static int vk_max_error_string(void) { return MPI_MAX_ERROR_STRING; }
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"unsafe"
)

// ErrMPI is wrapped by every error an MPI call returned.
var ErrMPI = errors.New("MPI error")

// ErrFinalized is wrapped by the errors of calls on a World after Finalize.
var ErrFinalized = errors.New("MPI is finalized")

// Launched reports whether this process was started by OpenMPI's mpirun (which
// sets OMPI_COMM_WORLD_SIZE); outside it Init makes a world of one process.
func Launched() bool { return os.Getenv("OMPI_COMM_WORLD_SIZE") != "" }

// World is MPI_COMM_WORLD as this process sees it.
type World struct {
	rank, size int
	calls      chan func() // run on the MPI thread
	mu         sync.Mutex  // one call at a time; guards done, stats
	done       bool
	stats      Stats
}

// Stats counts a World's AllGather calls and the bytes they moved.
type Stats struct {
	AllGathers    int
	BytesSent     int64 // this process's contributions
	BytesReceived int64 // every process's, this one's included
}

var (
	once  sync.Once
	world *World
	wErr  error
)

// Init initialises MPI (once per process: later calls return the same World, or
// the same error) and returns the world.
func Init() (*World, error) {
	once.Do(func() { world, wErr = start() })
	return world, wErr
}

// start locks a goroutine to an OS thread, initialises MPI there and serves every
// later MPI call on it.
func start() (*World, error) {
	w := &World{calls: make(chan func())}
	ready := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread belongs to MPI
		if rc := C.vk_init(); rc != 0 {
			if rc == -1 {
				ready <- fmt.Errorf("mpi: Init: %w: MPI_THREAD_FUNNELED is not provided", ErrMPI)
			} else {
				ready <- mpiError("MPI_Init_thread", rc)
			}
			return
		}
		var r, n C.int
		if err := check("MPI_Comm_rank", C.vk_rank(&r)); err != nil {
			ready <- err
			return
		}
		if err := check("MPI_Comm_size", C.vk_size(&n)); err != nil {
			ready <- err
			return
		}
		w.rank, w.size = int(r), int(n)
		ready <- nil
		for f := range w.calls {
			f()
		}
	}()
	if err := <-ready; err != nil {
		return nil, err
	}
	return w, nil
}

// do runs f on the MPI thread, one call at a time.
func (w *World) do(what string, f func() error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return fmt.Errorf("mpi: %s: %w", what, ErrFinalized)
	}
	errc := make(chan error)
	w.calls <- func() { errc <- f() }
	return <-errc
}

// Rank is this process's rank in MPI_COMM_WORLD; Size the number of processes.
func (w *World) Rank() int { return w.rank }
func (w *World) Size() int { return w.size }

// Barrier waits until every process has reached it.
func (w *World) Barrier() error {
	return w.do("Barrier", func() error { return check("MPI_Barrier", C.vk_barrier()) })
}

// AllGather gives b to every process and returns every process's bytes, by rank
// (MPI_Allgather of the lengths, then MPI_Allgatherv of the bytes). Every process
// must call it, in the same order. The total may not exceed MPI's int count
// (2 GiB - 1 bytes). ctx is checked before the call: a call in progress cannot
// be interrupted (MPI's collectives have no timeout).
func (w *World) AllGather(ctx context.Context, b []byte) ([][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("mpi: AllGather: %w", err)
	}
	var out [][]byte
	err := w.do("AllGather", func() error {
		var err error
		out, err = w.allGather(b)
		return err
	})
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	w.stats.AllGathers++
	w.stats.BytesSent += int64(len(b))
	for _, o := range out {
		w.stats.BytesReceived += int64(len(o))
	}
	w.mu.Unlock()
	return out, nil
}

// allGather runs on the MPI thread.
func (w *World) allGather(b []byte) ([][]byte, error) {
	lens := make([]C.longlong, w.size)
	if err := check("MPI_Allgather", C.vk_allgather_len(C.longlong(len(b)), &lens[0])); err != nil {
		return nil, err
	}
	counts, displs := make([]C.int, w.size), make([]C.int, w.size)
	total := int64(0)
	for r, n := range lens {
		if n < 0 || total+int64(n) > math.MaxInt32 {
			return nil, fmt.Errorf("mpi: AllGather: %w: the processes' %d bytes and more exceed MPI's int count", ErrMPI, total+int64(n))
		}
		counts[r], displs[r] = C.int(n), C.int(total)
		total += int64(n)
	}
	// MPI may not be given a null buffer, even of no bytes.
	recv := make([]byte, max(total, 1))
	send := b
	if len(send) == 0 {
		send = make([]byte, 1)
	}
	if err := check("MPI_Allgatherv", C.vk_allgatherv(unsafe.Pointer(&send[0]), C.int(len(b)),
		unsafe.Pointer(&recv[0]), &counts[0], &displs[0])); err != nil {
		return nil, err
	}
	out := make([][]byte, w.size)
	for r := range out {
		out[r] = recv[displs[r] : displs[r]+counts[r] : displs[r]+counts[r]]
	}
	return out, nil
}

// Stats are the AllGathers so far and the bytes they moved.
func (w *World) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

// Finalize ends MPI for this process (every process must call it); later calls on
// the World fail with ErrFinalized, and MPI cannot be initialised again.
func (w *World) Finalize() error {
	err := w.do("Finalize", func() error { return check("MPI_Finalize", C.vk_finalize()) })
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.done = true
		close(w.calls)
	}
	return err
}

func check(what string, rc C.int) error {
	if rc == C.MPI_SUCCESS {
		return nil
	}
	return mpiError(what, rc)
}

func mpiError(what string, rc C.int) error {
	buf := make([]C.char, C.vk_max_error_string())
	var n C.int
	C.vk_error_string(rc, &buf[0], &n)
	return fmt.Errorf("mpi: %s: %w %d: %s", what, ErrMPI, int(rc), C.GoStringN(&buf[0], n))
}
