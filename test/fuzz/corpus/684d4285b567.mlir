func.func @neurons_multi_step(%x: tensor<4x2x3xf32>, %w1: tensor<1xf32>, %wn: tensor<3xf32>)
    -> (tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>,
        tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>) {
  %0 = snn.lif %x : tensor<4x2x3xf32>
  %1 = snn.lif %x {k = 0.25, c = 1.0, v_leak = -0.1, v_th = 1.5, v_reset = -0.5,
                   reset = #snn.reset<soft>, v_init = 0.2, strict, detach_reset,
                   surrogate = #snn.surrogate<fast_sigmoid, alpha = 10.0, theta_grad = 0.5>}
       : tensor<4x2x3xf32>
  %2 = snn.lif %x {k = dense<[0.1, 0.2, 0.3]> : tensor<3xf32>,
                   v_th = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>,
                   surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<4x2x3xf32>
  %3 = snn.if %x {c = 2.0, surrogate = #snn.surrogate<triangle, alpha = 1.0>} : tensor<4x2x3xf32>
  %4 = snn.plif %x, %w1 : tensor<4x2x3xf32>, tensor<1xf32>
  %5 = snn.plif %x, %wn {decay_input = false, v_leak = 0.1} : tensor<4x2x3xf32>, tensor<3xf32>
  %6 = snn.li %x {k = 0.1, v_init = 1.0} : tensor<4x2x3xf32>
  %7 = snn.cuba_lif %x {k_syn = 0.2, c_syn = 2.0, i_init = 0.1,
                        surrogate = #snn.surrogate<sigmoid, alpha = 4.0>} : tensor<4x2x3xf32>
  return %0, %1, %2, %3, %4, %6, %7 : tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>,
      tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>
}
