func.func @loop_too_few_results(%x: tensor<8x2x3xf32>, %v0: tensor<2x3xf32>) {
  %o = snn.time_loop ins(%x : tensor<8x2x3xf32>) iter_args(%v0, %v0 : tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%xt: tensor<2x3xf32>, %a: tensor<2x3xf32>, %b: tensor<2x3xf32>):
    snn.yield %a : tensor<2x3xf32>
  }
  return
}
