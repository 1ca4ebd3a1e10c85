func.func @loop_scalar_input(%x: tensor<f32>) -> tensor<4x2xf32> {
  %o = snn.time_loop ins(%x : tensor<f32>) {num_steps = 4 : i64} -> tensor<4x2xf32> {
  ^bb0(%xt: tensor<f32>):
    %c = arith.constant dense<0.0> : tensor<2xf32>
    snn.yield %c : tensor<2xf32>
  }
  return %o : tensor<4x2xf32>
}
