// A small spiking MLP for the data parallel tests: BATCH is replaced by the
// per-rank batch (sed), so one process with the global batch compiles the
// same model.
func.func @forward(%x: tensor<4xBATCHx16xf32>) -> tensor<4xBATCHx4xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<24x16xf32>
  %b1 = snn.param "fc1.bias" {init = #snn.init<uniform>, init_scale = 0.25} : tensor<24xf32>
  %h1 = snn.linear %x, %w1, %b1
      : tensor<4xBATCHx16xf32>, tensor<24x16xf32>, tensor<24xf32> -> tensor<4xBATCHx24xf32>
  %s1 = snn.lif %h1 {k = 0.5, c = 0.5, snn.name = "lif1"} : tensor<4xBATCHx24xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x24xf32>
  %b2 = snn.param "fc2.bias" {init = #snn.init<uniform>, init_scale = 0.2} : tensor<4xf32>
  %h2 = snn.linear %s1, %w2, %b2
      : tensor<4xBATCHx24xf32>, tensor<4x24xf32>, tensor<4xf32> -> tensor<4xBATCHx4xf32>
  %out = snn.li %h2 {k = 0.5, c = 0.5, snn.name = "readout"} : tensor<4xBATCHx4xf32>
  return %out : tensor<4xBATCHx4xf32>
}
