// The Fashion-MNIST spiking MLP to train: 784-512-10, one LIF hidden layer
// (tau = 2: k = c = 0.5, v_th = 1, hard reset to 0, sigmoid surrogate with
// alpha = 4), a leaky-integrator readout whose time-mean membrane gives the
// class scores, T = 8 steps of direct (analog) input, batch 64.
//
//   snn-opt examples/fmnist-mlp.mlir --snn-autodiff="optimizer=adam lr=0.001" \
//       --snn-compile="output=mlp.snnmod target=all"
//   snn-run mlp.snnmod train --data /usr/share/datasets/fashion-mnist --epochs 10 \
//       --lr-schedule cosine
//
// --snn-autodiff picks the membrane cross-entropy for an snn.li output.

func.func @forward(%x: tensor<8x64x784xf32>) -> tensor<8x64x10xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<512x784xf32>
  %b1 = snn.param "fc1.bias" {init = #snn.init<uniform>, init_scale = 0.03571428571} : tensor<512xf32>
  %h1 = snn.linear %x, %w1, %b1
      : tensor<8x64x784xf32>, tensor<512x784xf32>, tensor<512xf32> -> tensor<8x64x512xf32>
  %s1 = snn.lif %h1 {k = 0.5, c = 0.5, snn.name = "lif1"} : tensor<8x64x512xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<10x512xf32>
  %b2 = snn.param "fc2.bias" {init = #snn.init<uniform>, init_scale = 0.04419417382} : tensor<10xf32>
  %h2 = snn.linear %s1, %w2, %b2
      : tensor<8x64x512xf32>, tensor<10x512xf32>, tensor<10xf32> -> tensor<8x64x10xf32>
  %out = snn.li %h2 {k = 0.5, c = 0.5, snn.name = "readout"} : tensor<8x64x10xf32>
  return %out : tensor<8x64x10xf32>
}
