func.func @yield_state_type(%x: tensor<8x2x3xf32>, %v0: tensor<2x3xf32>) -> tensor<8x2x3xf32> {
  %o, %v = snn.time_loop ins(%x : tensor<8x2x3xf32>) iter_args(%v0 : tensor<2x3xf32>) -> tensor<8x2x3xf32>, tensor<2x3xf32> {
  ^bb0(%xt: tensor<2x3xf32>, %a: tensor<2x3xf32>):
    %c = arith.constant dense<0.0> : tensor<3x2xf32>
    snn.yield %xt, %c : tensor<2x3xf32>, tensor<3x2xf32>
  }
  return %o : tensor<8x2x3xf32>
}
