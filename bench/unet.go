package bench

import (
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn"
)

// UNetStep is one denoising step of the Stable Diffusion v2 UNet in bf16
// (nn.SDUNet: 64×64×4 latent, 320-640-1280-1280 channels, a 77×1024 text
// context), every weight a parameter; small is a 16×16 latent with 32-64 channels
// and 8 groups, for tests. It is the workload of issue 17's cpuref target.
func UNetStep(small bool) (*hlo.Module, []*hlo.Literal, error) {
	c := nn.SDUNet
	if small {
		c = nn.UNetConfig{Size: 16, InChannels: 4, Channels: []int64{32, 64}, Attention: []bool{true, false},
			ResBlocks: 1, HeadDim: 16, Groups: 8, ContextLen: 7, ContextDim: 24}
	}
	b := hlo.NewBuilder("unet_step")
	w := paramWeights(b, hlo.BF16)
	x := w("latent", 1, c.Size, c.Size, c.InChannels)
	temb := w("temb", 1, 4*c.Channels[0])
	ctx := w("context", 1, c.ContextLen, c.ContextDim)
	return built(b, nn.UNetStep(b, x, temb, ctx, c, w), 17, nil)
}
