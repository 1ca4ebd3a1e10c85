func.func @pool_kernel_too_large(%x: tensor<2x3x2x2xf32>) -> tensor<2x3x1x1xf32> {
  %y = snn.max_pool2d %x {kernel_size = array<i64: 3, 3>} : tensor<2x3x2x2xf32> -> tensor<2x3x1x1xf32>
  return %y : tensor<2x3x1x1xf32>
}
