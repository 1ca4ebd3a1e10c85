func.func @pool_result(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32> {
  %y = snn.avg_pool2d %x {kernel_size = array<i64: 2, 2>} : tensor<2x3x8x8xf32> -> tensor<2x3x8x8xf32>
  return %y : tensor<2x3x8x8xf32>
}
