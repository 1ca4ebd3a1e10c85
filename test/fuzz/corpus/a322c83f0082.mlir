func.func @loop_no_steps(%v0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %vT = snn.time_loop iter_args(%v0 : tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%v: tensor<2x3xf32>):
    snn.yield %v : tensor<2x3xf32>
  }
  return %vT : tensor<2x3xf32>
}
