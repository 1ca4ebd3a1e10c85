func.func @param_dynamic() -> tensor<?xf32> {
  %p = snn.param "w" : tensor<?xf32>
  return %p : tensor<?xf32>
}
