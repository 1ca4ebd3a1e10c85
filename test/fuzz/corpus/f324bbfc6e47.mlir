func.func @param_twice() -> tensor<3xf32> {
  %p = snn.param "w" : tensor<3xf32>
  %q = snn.param "w" : tensor<4xf32>
  return %p : tensor<3xf32>
}
