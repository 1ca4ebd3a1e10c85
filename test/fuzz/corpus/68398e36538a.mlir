func.func @loop_inputs_disagree(%x: tensor<8x2x3xf32>, %y: tensor<4x2x3xf32>) -> tensor<8x2x3xf32> {
  %o = snn.time_loop ins(%x, %y : tensor<8x2x3xf32>, tensor<4x2x3xf32>) -> tensor<8x2x3xf32> {
  ^bb0(%xt: tensor<2x3xf32>, %yt: tensor<2x3xf32>):
    snn.yield %xt : tensor<2x3xf32>
  }
  return %o : tensor<8x2x3xf32>
}
