func.func @step_rank(%x: tensor<3xf32>) -> tensor<3xf32> {
  %s, %v = snn.lif_step %x, %x : tensor<3xf32>
  return %s : tensor<3xf32>
}
