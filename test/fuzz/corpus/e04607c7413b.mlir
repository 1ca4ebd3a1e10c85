func.func @scalar_param_type(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  %s = snn.lif %x {v_th = 1.0 : f32} : tensor<4x2x3xf32>
  return %s : tensor<4x2x3xf32>
}
