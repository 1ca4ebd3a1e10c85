func.func @loop_block_input_type(%x: tensor<8x2x3xf32>) -> tensor<8x3x2xf32> {
  %o = snn.time_loop ins(%x : tensor<8x2x3xf32>) -> tensor<8x3x2xf32> {
  ^bb0(%xt: tensor<3x2xf32>):
    snn.yield %xt : tensor<3x2xf32>
  }
  return %o : tensor<8x3x2xf32>
}
