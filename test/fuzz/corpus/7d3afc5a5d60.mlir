func.func @loop_result_not_stacked(%x: tensor<8x2x3xf32>) -> tensor<4x2x3xf32> {
  %o = snn.time_loop ins(%x : tensor<8x2x3xf32>) -> tensor<4x2x3xf32> {
  ^bb0(%xt: tensor<2x3xf32>):
    snn.yield %xt : tensor<2x3xf32>
  }
  return %o : tensor<4x2x3xf32>
}
