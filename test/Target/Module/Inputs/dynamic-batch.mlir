func.func @forward(%x: tensor<4x?x6xf32>) -> tensor<4x?x3xf32> {
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x6xf32>
  %h = snn.linear %x, %w : tensor<4x?x6xf32>, tensor<3x6xf32> -> tensor<4x?x3xf32>
  %s = snn.lif %h : tensor<4x?x3xf32>
  return %s : tensor<4x?x3xf32>
}
