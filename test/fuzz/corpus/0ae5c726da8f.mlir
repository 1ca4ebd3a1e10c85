func.func @param_value_type() -> tensor<3xf32> {
  %p = snn.param "w" {value = dense<1> : tensor<3xi32>} : tensor<3xf32>
  return %p : tensor<3xf32>
}
