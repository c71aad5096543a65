package mpi_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/device/devicetest"
	"github.com/vkxla/vkxla/mpi"
)

// The tests run twice over: a plain `go test` process (the launcher) starts this
// test binary under `mpirun -np 2` and checks both ranks' reports; under mpirun
// (mpi.Launched) each rank runs the checks themselves, as one device of the
// 2-device runs. So `go test ./mpi/` (and make test) runs them, and no check
// passes by not running.

const ranks = 2

// world is this rank's MPI_COMM_WORLD under mpirun (nil in the launcher).
var world *mpi.World

func TestMain(m *testing.M) {
	if !mpi.Launched() {
		os.Exit(m.Run())
	}
	w, err := mpi.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mpi.Init:", err)
		os.Exit(2)
	}
	world = w
	code := m.Run()
	if err := w.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, "mpi.Finalize:", err)
		code = 2
	}
	os.Exit(code)
}

// mpirunArgs are the flags that run np ranks of this binary on this machine: as
// root OpenMPI wants --allow-run-as-root; --oversubscribe lets 2 ranks share
// fewer cores; --timeout ends a stuck job; --tag-output prefixes each line with
// [1,rank]. Shared memory (vader) carries the bytes between local ranks; no
// network but loopback is needed.
func mpirunArgs(np int, args ...string) []string {
	flags := []string{"--oversubscribe", "--tag-output", "--timeout", "180", "-np", fmt.Sprint(np)}
	if os.Geteuid() == 0 {
		flags = append(flags, "--allow-run-as-root")
	}
	for _, v := range []string{"VK_LAYER_SETTINGS_PATH", "VKXLA_VALIDATION"} {
		if os.Getenv(v) != "" {
			flags = append(flags, "-x", v)
		}
	}
	return append(append(flags, os.Args[0]), args...)
}

// launch runs this test binary's args under mpirun and returns each rank's
// output lines (mpirun's own lines under rank -1).
func launch(t testing.TB, args ...string) map[int][]string {
	t.Helper()
	mpirun, err := exec.LookPath("mpirun")
	require.NoError(t, err, "mpirun (Debian's openmpi-bin: make setup installs it)")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, mpirun, mpirunArgs(ranks, args...)...)
	// Containers often forbid the cross-memory attach vader would use for large
	// messages; copying through the shared segment works everywhere.
	cmd.Env = append(os.Environ(), "OMPI_MCA_btl_vader_single_copy_mechanism=none")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "mpirun -np %d:\n%s", ranks, out)
	lines := map[int][]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		rank, line := -1, sc.Text()
		var job int
		if n, _ := fmt.Sscanf(line, "[%d,%d]<", &job, &rank); n == 2 {
			line = line[strings.Index(line, ":")+1:]
		} else {
			rank = -1
		}
		lines[rank] = append(lines[rank], line)
	}
	return lines
}

// TestMPI runs every check of a 2-process run: as the launcher, under mpirun;
// under mpirun, the checks, each rank reporting that all of them passed.
func TestMPI(t *testing.T) {
	if !mpi.Launched() {
		lines := launch(t, "-test.run=^TestMPI$", "-test.count=1", "-test.v")
		for r := range ranks {
			out := strings.Join(lines[r], "\n")
			if strings.Contains(out, "--- SKIP: TestMPI") {
				t.Skipf("rank %d skipped:\n%s", r, out)
			}
			require.Contains(t, out, fmt.Sprintf("vkxla-mpi: rank %d of %d: every check passed", r, ranks), "rank %d's output:\n%s", r, out)
		}
		return
	}
	require.Equal(t, ranks, world.Size(), "run with mpirun -np %d", ranks)
	rt := newRuntime(t)
	t.Run("world", testWorld)
	t.Run("collectives", func(t *testing.T) { testCollectives(t, rt) })
	t.Run("mlp-step", func(t *testing.T) { testMLPStep(t, rt) })
	t.Run("transformer-step", func(t *testing.T) { testTransformerStep(t, rt) })
	t.Run("mismatch", func(t *testing.T) { testMismatch(t, rt) })
	if !t.Failed() {
		fmt.Printf("vkxla-mpi: rank %d of %d: every check passed\n", world.Rank(), world.Size())
	}
}

func newRuntime(t testing.TB) *vkxla.Runtime {
	t.Helper()
	d := devicetest.Open(t)
	rt, err := vkxla.NewRuntime(vkxla.WithDevice(d))
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, rt.Close())
		require.Zero(t, d.LiveObjects(), "Vulkan objects the runtime left behind after Close")
	})
	return rt
}

// The binding itself: ranks, an all-gather of messages of different lengths
// (an empty one among them), a barrier, the counts.
func testWorld(t *testing.T) {
	r := world.Rank()
	require.Less(t, r, ranks)
	before := world.Stats()
	msg := []byte(strings.Repeat(fmt.Sprint(r), 3*r)) // rank 0 sends nothing
	all, err := world.AllGather(context.Background(), msg)
	require.NoError(t, err)
	require.Len(t, all, ranks)
	for q, b := range all {
		require.Equal(t, strings.Repeat(fmt.Sprint(q), 3*q), string(b), "rank %d's bytes", q)
	}
	require.NoError(t, world.Barrier())
	s := world.Stats()
	require.Equal(t, before.AllGathers+1, s.AllGathers)
	require.Equal(t, before.BytesSent+int64(len(msg)), s.BytesSent)
	require.Equal(t, before.BytesReceived+3, s.BytesReceived) // 0 + 3 bytes
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = world.AllGather(cancelled, msg)
	require.ErrorIs(t, err, context.Canceled, "a cancelled context joins no call")
}
