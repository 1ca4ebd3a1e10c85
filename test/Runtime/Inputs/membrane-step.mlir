// A step-form MLP that returns the second LIF layer's membrane (V after the
// step's reset) at every step, as a snnTorch model returning `mem` does.
// --snn-temporal-fusion fuses lif1 into one scan and keeps lif2 in the time
// loop: the multi-step neuron ops return only their spikes.
func.func @forward(%x: tensor<6x3x8xf32>) -> tensor<6x3x4xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<6x8xf32>
  %b1 = snn.param "fc1.bias" {init = #snn.init<uniform>, init_scale = 0.35} : tensor<6xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x6xf32>
  %v1_0 = arith.constant dense<0.0> : tensor<3x6xf32>
  %v2_0 = arith.constant dense<0.0> : tensor<3x4xf32>
  %out, %v1, %v2 = snn.time_loop ins(%x : tensor<6x3x8xf32>)
      iter_args(%v1_0, %v2_0 : tensor<3x6xf32>, tensor<3x4xf32>)
      -> tensor<6x3x4xf32>, tensor<3x6xf32>, tensor<3x4xf32> {
  ^bb0(%xt: tensor<3x8xf32>, %v1t: tensor<3x6xf32>, %v2t: tensor<3x4xf32>):
    %h1 = snn.linear %xt, %w1, %b1
        : tensor<3x8xf32>, tensor<6x8xf32>, tensor<6xf32> -> tensor<3x6xf32>
    %s1, %v1n = snn.lif_step %h1, %v1t {k = 0.5, c = 0.5, snn.name = "lif1"} : tensor<3x6xf32>
    %h2 = snn.linear %s1, %w2 : tensor<3x6xf32>, tensor<4x6xf32> -> tensor<3x4xf32>
    %s2, %v2n = snn.lif_step %h2, %v2t {k = 0.25, c = 1.0, v_th = 0.5, reset = #snn.reset<soft>, snn.name = "lif2"} : tensor<3x4xf32>
    snn.yield %v2n, %v1n, %v2n : tensor<3x4xf32>, tensor<3x6xf32>, tensor<3x4xf32>
  }
  return %out : tensor<6x3x4xf32>
}
