// Command gomlx-mlp trains the MLP classifier of package mlp with GoMLX's
// training loop on the vkxla backend and on simplego, from the same initial
// weights and batches, and prints both loss curves side by side, the largest
// difference, the median step time of each in this run, and vkxla's planned
// peak device memory for the train step.
//
//	go run ./cmd/gomlx-mlp -steps 100
package main

import (
	"flag"
	"fmt"
	"math"
	"os"

	"github.com/gomlx/gomlx/backends/simplego"

	vkgomlx "github.com/vkxla/vkxla/gomlx"
	"github.com/vkxla/vkxla/gomlx/mlp"
)

func main() {
	c := mlp.Default
	flag.IntVar(&c.Steps, "steps", c.Steps, "training steps")
	flag.IntVar(&c.Batch, "batch", c.Batch, "batch size")
	flag.IntVar(&c.Hidden, "hidden", c.Hidden, "hidden units")
	config := flag.String("config", "", "vkxla backend config (device=N,budget=SIZE,validation=0|1)")
	every := flag.Int("every", 10, "print every n-th step's losses")
	flag.Parse()
	if err := run(c, *config, *every); err != nil {
		fmt.Fprintln(os.Stderr, "gomlx-mlp:", err)
		os.Exit(1)
	}
}

func run(c mlp.Config, config string, every int) error {
	cfg, err := vkgomlx.ParseConfig(config)
	if err != nil {
		return err
	}
	vk, err := vkgomlx.NewWithConfig(cfg)
	if err != nil {
		return err
	}
	defer vk.Close()
	fmt.Printf("vkxla backend: %s\n", vk.Description())
	got, err := mlp.Train(vk, c)
	if err != nil {
		return fmt.Errorf("vkxla: %w", err)
	}
	step, _ := vk.MemoryStats() // the train step ran last
	live := vk.LiveAtPeak()
	sg, err := simplego.New("")
	if err != nil {
		return err
	}
	defer sg.Finalize()
	want, err := mlp.Train(sg, c)
	if err != nil {
		return fmt.Errorf("simplego: %w", err)
	}
	fmt.Printf("MLP %d→%d→%d, batch %d, Adam %g, %d steps (same initial weights and batches)\n\n",
		c.Features, c.Hidden, c.Classes, c.Batch, c.LearningRate, c.Steps)
	fmt.Printf("%6s %12s %12s\n", "step", "vkxla loss", "simplego")
	worst := 0.0
	for i := range got.Losses {
		d := math.Abs(float64(got.Losses[i]-want.Losses[i])) / (1 + math.Abs(float64(want.Losses[i])))
		worst = max(worst, d)
		if i%every == 0 || i == len(got.Losses)-1 {
			fmt.Printf("%6d %12.6f %12.6f\n", i, got.Losses[i], want.Losses[i])
		}
	}
	fmt.Printf("\nlargest relative loss difference: %.2e (tolerance 1e-3)\n", worst)
	accGot, err := mlp.Accuracy(vk, got.Context, c)
	if err != nil {
		return err
	}
	accWant, err := mlp.Accuracy(sg, want.Context, c)
	if err != nil {
		return err
	}
	fmt.Printf("accuracy: vkxla %.4f, simplego %.4f\n", accGot, accWant)
	const warm = 5
	g, w := got.MedianStep(warm), want.MedianStep(warm)
	fmt.Printf("median step time after %d warm steps: vkxla %v, simplego %v (vkxla/simplego %.2f×)\n",
		warm, g, w, float64(g)/float64(w))
	fmt.Printf("vkxla train step, planned device memory: %s\n", step)
	fmt.Printf("live at its peak: %d buffers", len(live))
	for i, b := range live {
		if i < 4 {
			fmt.Printf("; %s", b)
		}
	}
	fmt.Println()
	fmt.Printf("vkxla runtime now holds: %s\n", vk.RuntimeMemoryStats())
	if worst > 1e-3 {
		return fmt.Errorf("loss curves differ by %.2e > 1e-3", worst)
	}
	return nil
}
