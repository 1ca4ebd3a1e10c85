func.func @pool_kernel(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32> {
  %y = snn.max_pool2d %x {kernel_size = array<i64: 0, 2>} : tensor<2x3x8x8xf32> -> tensor<2x3x4x4xf32>
  return %y : tensor<2x3x4x4xf32>
}
