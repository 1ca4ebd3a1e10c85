func.func @step_form(%x: tensor<8x2x4xf32>) -> tensor<8x2x3xf32> {
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x4xf32>
  %v0 = arith.constant dense<0.0> : tensor<2x3xf32>
  %out, %vT = snn.time_loop ins(%x : tensor<8x2x4xf32>) iter_args(%v0 : tensor<2x3xf32>)
      -> tensor<8x2x3xf32>, tensor<2x3xf32> {
  ^bb0(%xt: tensor<2x4xf32>, %v: tensor<2x3xf32>):
    %h = snn.linear %xt, %w : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
    %s, %vn = snn.lif_step %h, %v : tensor<2x3xf32>
    snn.yield %s, %vn : tensor<2x3xf32>, tensor<2x3xf32>
  }
  return %out : tensor<8x2x3xf32>
}
