func.func @pool_padding(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x5x5xf32> {
  %y = snn.avg_pool2d %x {kernel_size = array<i64: 2, 2>, padding = array<i64: 2, 2>} : tensor<2x3x8x8xf32> -> tensor<2x3x5x5xf32>
  return %y : tensor<2x3x5x5xf32>
}
