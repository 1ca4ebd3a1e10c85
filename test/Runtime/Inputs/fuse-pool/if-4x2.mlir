// An if layer fused with a 4x2 average pooling (non-square windows).
func.func @forward(%x: tensor<4x8x3x4x6xf32>) -> tensor<4x8x3x1x3xf32> {
  %c = snn.if %x {snn.name = "c"} : tensor<4x8x3x4x6xf32>
  %pc = snn.avg_pool2d %c {kernel_size = array<i64: 4, 2>} : tensor<4x8x3x4x6xf32> -> tensor<4x8x3x1x3xf32>
  return %pc : tensor<4x8x3x1x3xf32>
}
