func.func @param_kaiming_rank() -> tensor<3xf32> {
  %p = snn.param "b" {init = #snn.init<kaiming_uniform>} : tensor<3xf32>
  return %p : tensor<3xf32>
}
