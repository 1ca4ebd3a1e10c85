func.func @param_init_scale() -> tensor<3xf32> {
  %p = snn.param "b" {init = #snn.init<uniform>} : tensor<3xf32>
  return %p : tensor<3xf32>
}
