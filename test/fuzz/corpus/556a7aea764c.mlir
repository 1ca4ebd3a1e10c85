func.func @pool_rank(%x: tensor<3x8x8xf32>) -> tensor<3x4x4xf32> {
  %y = snn.avg_pool2d %x {kernel_size = array<i64: 2, 2>} : tensor<3x8x8xf32> -> tensor<3x4x4xf32>
  return %y : tensor<3x4x4xf32>
}
