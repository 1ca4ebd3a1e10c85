// Spiking MLP 784-512-10 for 28x28 images (MNIST / Fashion-MNIST), multi-step
// form: T = 8 steps, batch 64, LIF neurons as SpikingJelly LIFNode(tau=2)
// (k = c = 0.5, v_th = 1, hard reset to 0). The output is the spike train of
// the 10 class neurons; the class is the one that fires most.
//
//   snn-opt examples/mlp.mlir --snn-compile="output=mlp.snnmod target=cpu"
//
// examples/mlp-step.mlir is the same network in the step form.

func.func @forward(%x: tensor<8x64x784xf32>) -> tensor<8x64x10xf32> {
  // PyTorch nn.Linear defaults: weight U(+-1/sqrt(fan_in)), bias the same.
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<512x784xf32>
  %b1 = snn.param "fc1.bias" {init = #snn.init<uniform>, init_scale = 0.03571428571} : tensor<512xf32>
  %h1 = snn.linear %x, %w1, %b1
      : tensor<8x64x784xf32>, tensor<512x784xf32>, tensor<512xf32> -> tensor<8x64x512xf32>
  %s1 = snn.lif %h1 {k = 0.5, c = 0.5, snn.name = "lif1"} : tensor<8x64x512xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<10x512xf32>
  %b2 = snn.param "fc2.bias" {init = #snn.init<uniform>, init_scale = 0.04419417382} : tensor<10xf32>
  %h2 = snn.linear %s1, %w2, %b2
      : tensor<8x64x512xf32>, tensor<10x512xf32>, tensor<10xf32> -> tensor<8x64x10xf32>
  %s2 = snn.lif %h2 {k = 0.5, c = 0.5, snn.name = "lif2"} : tensor<8x64x10xf32>
  return %s2 : tensor<8x64x10xf32>
}
