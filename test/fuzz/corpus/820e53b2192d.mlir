func.func @loop_steps_mismatch(%x: tensor<8x2x3xf32>) -> tensor<8x2x3xf32> {
  %o = snn.time_loop ins(%x : tensor<8x2x3xf32>) {num_steps = 4 : i64} -> tensor<8x2x3xf32> {
  ^bb0(%xt: tensor<2x3xf32>):
    snn.yield %xt : tensor<2x3xf32>
  }
  return %o : tensor<8x2x3xf32>
}
