func.func @param_name() -> tensor<3xf32> {
  %p = snn.param "" : tensor<3xf32>
  return %p : tensor<3xf32>
}
