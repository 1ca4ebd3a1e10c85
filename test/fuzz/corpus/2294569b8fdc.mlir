func.func @autonomous(%v0: tensor<2x3xf32>) -> tensor<5x2x3xf32> {
  %out, %vT = snn.time_loop iter_args(%v0 : tensor<2x3xf32>) {num_steps = 5 : i64}
      -> tensor<5x2x3xf32>, tensor<2x3xf32> {
  ^bb0(%v: tensor<2x3xf32>):
    %x = arith.constant dense<0.3> : tensor<2x3xf32>
    %s, %vn = snn.lif_step %x, %v : tensor<2x3xf32>
    snn.yield %s, %vn : tensor<2x3xf32>, tensor<2x3xf32>
  }
  return %out : tensor<5x2x3xf32>
}
