func.func @yield_outside_loop(%x: tensor<2x3xf32>) {
  snn.yield %x : tensor<2x3xf32>
}
