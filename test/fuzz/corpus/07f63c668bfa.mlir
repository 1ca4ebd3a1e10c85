func.func @pool_stride(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32> {
  %y = snn.sum_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, -1>} : tensor<2x3x8x8xf32> -> tensor<2x3x4x4xf32>
  return %y : tensor<2x3x4x4xf32>
}
