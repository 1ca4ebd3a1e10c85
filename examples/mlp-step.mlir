// The spiking MLP of examples/mlp.mlir (784-512-10, LIF, T = 8, batch 64) in
// the step form, as an importer produces it: one snn.time_loop whose body is
// one time step, the membranes carried as loop state from 0.
// --snn-temporal-fusion turns it into the multi-step form:
//
//   snn-opt examples/mlp-step.mlir --snn-temporal-fusion \
//       --snn-compile="output=mlp.snnmod target=cpu"

func.func @forward(%x: tensor<8x64x784xf32>) -> tensor<8x64x10xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<512x784xf32>
  %b1 = snn.param "fc1.bias" {init = #snn.init<uniform>, init_scale = 0.03571428571} : tensor<512xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<10x512xf32>
  %b2 = snn.param "fc2.bias" {init = #snn.init<uniform>, init_scale = 0.04419417382} : tensor<10xf32>
  %v1_0 = arith.constant dense<0.0> : tensor<64x512xf32>
  %v2_0 = arith.constant dense<0.0> : tensor<64x10xf32>
  %out, %v1, %v2 = snn.time_loop ins(%x : tensor<8x64x784xf32>)
      iter_args(%v1_0, %v2_0 : tensor<64x512xf32>, tensor<64x10xf32>)
      -> tensor<8x64x10xf32>, tensor<64x512xf32>, tensor<64x10xf32> {
  ^bb0(%xt: tensor<64x784xf32>, %v1t: tensor<64x512xf32>, %v2t: tensor<64x10xf32>):
    %h1 = snn.linear %xt, %w1, %b1
        : tensor<64x784xf32>, tensor<512x784xf32>, tensor<512xf32> -> tensor<64x512xf32>
    %s1, %v1n = snn.lif_step %h1, %v1t {k = 0.5, c = 0.5} : tensor<64x512xf32>
    %h2 = snn.linear %s1, %w2, %b2
        : tensor<64x512xf32>, tensor<10x512xf32>, tensor<10xf32> -> tensor<64x10xf32>
    %s2, %v2n = snn.lif_step %h2, %v2t {k = 0.5, c = 0.5} : tensor<64x10xf32>
    snn.yield %s2, %v1n, %v2n : tensor<64x10xf32>, tensor<64x512xf32>, tensor<64x10xf32>
  }
  return %out : tensor<8x64x10xf32>
}
