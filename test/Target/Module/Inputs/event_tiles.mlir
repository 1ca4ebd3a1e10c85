// An event-driven layer for event-kernels.test whose tile width depends on
// the chips: K = 1472 (the SHD network's hidden width) -> N = 256.
func.func @forward(%x: tensor<2x3x1472xf32>) -> tensor<2x3x256xf32> {
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<256x1472xf32>
  %b = snn.param "fc.bias" {init = #snn.init<uniform>, init_scale = 0.1} : tensor<256xf32>
  %h = snn.linear %x, %w, %b : tensor<2x3x1472xf32>, tensor<256x1472xf32>, tensor<256xf32> -> tensor<2x3x256xf32>
  return %h : tensor<2x3x256xf32>
}
