func.func @loop_final_state(%x: tensor<8x2x3xf32>, %v0: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %o, %v = snn.time_loop ins(%x : tensor<8x2x3xf32>) iter_args(%v0 : tensor<2x3xf32>) -> tensor<8x2x3xf32>, tensor<2x4xf32> {
  ^bb0(%xt: tensor<2x3xf32>, %a: tensor<2x3xf32>):
    snn.yield %xt, %a : tensor<2x3xf32>, tensor<2x3xf32>
  }
  return %v : tensor<2x4xf32>
}
