// A soft-reset cuba_lif layer (two state variables) fused with a 2x2 sum pooling.
func.func @forward(%x: tensor<4x8x3x4x6xf32>) -> tensor<4x8x3x2x3xf32> {
  %b = snn.cuba_lif %x {snn.name = "b", reset = #snn.reset<soft>} : tensor<4x8x3x4x6xf32>
  %pb = snn.sum_pool2d %b {kernel_size = array<i64: 2, 2>} : tensor<4x8x3x4x6xf32> -> tensor<4x8x3x2x3xf32>
  return %pb : tensor<4x8x3x2x3xf32>
}
