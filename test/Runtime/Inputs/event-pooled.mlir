// A linear layer on avg-pooled spikes (the pooling fused into the neuron
// by --snn-fuse): its event-driven weight gradient lists the pooled values
// (event-lists-pooled.test).
func.func @forward(%x: tensor<4x2x3x4x4xf32>) -> tensor<4x2x5xf32> {
  %s = snn.lif %x {k = 0.5, c = 0.5, snn.name = "lif0"} : tensor<4x2x3x4x4xf32>
  %p = snn.avg_pool2d %s {kernel_size = array<i64: 2, 2>} : tensor<4x2x3x4x4xf32> -> tensor<4x2x3x2x2xf32>
  %f = snn.flatten %p : tensor<4x2x3x2x2xf32> -> tensor<4x2x12xf32>
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x12xf32>
  %h = snn.linear %f, %w : tensor<4x2x12xf32>, tensor<5x12xf32> -> tensor<4x2x5xf32>
  %y = snn.lif %h {k = 0.5, c = 0.5, snn.name = "lif1"} : tensor<4x2x5xf32>
  return %y : tensor<4x2x5xf32>
}
