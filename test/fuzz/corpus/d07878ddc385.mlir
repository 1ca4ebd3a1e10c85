func.func @param_value_shape() -> tensor<3xf32> {
  %p = snn.param "w" {value = dense<1.0> : tensor<4xf32>} : tensor<3xf32>
  return %p : tensor<3xf32>
}
