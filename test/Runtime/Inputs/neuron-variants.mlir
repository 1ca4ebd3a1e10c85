// Every neuron model, surrogate, reset, firing rule and gradient option of
// DESIGN §2 in one trainable chain (neuron-variants.test): what the
// runtime's deleted built-in neuron loops were tested on, now run as
// generated kernels against the float64 reference.
func.func @forward(%x: tensor<5x3x6xf32>) -> tensor<5x3x4xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<8x6xf32>
  %b1 = snn.param "fc1.bias" {init = #snn.init<uniform>, init_scale = 0.4} : tensor<8xf32>
  %a1 = snn.linear %x, %w1, %b1 : tensor<5x3x6xf32>, tensor<8x6xf32>, tensor<8xf32> -> tensor<5x3x8xf32>
  // Hard reset to a per-neuron v_reset (v_init = v_reset), strict firing,
  // the triangle surrogate, detached reset, a leak towards v_leak.
  %s1 = snn.lif %a1 {k = 0.3, c = 1.2, v_leak = 0.1,
                     v_th = dense<[0.5, 0.6, 0.7, 0.8, 0.5, 0.6, 0.7, 0.8]> : tensor<8xf32>,
                     v_reset = dense<[0.0, -0.1, -0.2, 0.0, -0.1, -0.2, 0.0, -0.1]> : tensor<8xf32>,
                     strict, detach_reset,
                     surrogate = #snn.surrogate<triangle, alpha = 1.0>,
                     snn.name = "lif_triangle"} : tensor<5x3x8xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<8x8xf32>
  %a2 = snn.linear %s1, %w2 : tensor<5x3x8xf32>, tensor<8x8xf32> -> tensor<5x3x8xf32>
  // IF with soft reset, a non-zero v_init, sigmoid with a secondary
  // gradient threshold (sparse gradients).
  %s2 = snn.if %a2 {c = 1.5, v_th = 0.4, v_init = 0.2, reset = #snn.reset<soft>,
                    surrogate = #snn.surrogate<sigmoid, alpha = 4.0, theta_grad = -0.5>,
                    snn.name = "if_soft_theta"} : tensor<5x3x8xf32>
  %w3 = snn.param "fc3.weight" {init = #snn.init<kaiming_uniform>} : tensor<8x8xf32>
  %a3 = snn.linear %s2, %w3 : tensor<5x3x8xf32>, tensor<8x8xf32> -> tensor<5x3x8xf32>
  // PLIF without input decay, per-feature weights, atan.
  %pw = snn.param "plif.w" {init = #snn.init<uniform>, init_scale = 1.0} : tensor<8xf32>
  %s3 = snn.plif %a3, %pw {decay_input = false, v_th = 0.6,
                           surrogate = #snn.surrogate<atan, alpha = 2.0>,
                           snn.name = "plif_nodecay"} : tensor<5x3x8xf32>, tensor<8xf32>
  %w4 = snn.param "fc4.weight" {init = #snn.init<kaiming_uniform>} : tensor<8x8xf32>
  %a4 = snn.linear %s3, %w4 : tensor<5x3x8xf32>, tensor<8x8xf32> -> tensor<5x3x8xf32>
  // CUBA-LIF, soft and detached reset, fast sigmoid, initial current.
  %s4 = snn.cuba_lif %a4 {k = 0.4, c = 1.0, k_syn = 0.3, c_syn = 1.5, i_init = 0.1,
                          v_th = 0.5, reset = #snn.reset<soft>, detach_reset,
                          surrogate = #snn.surrogate<fast_sigmoid, alpha = 5.0>,
                          snn.name = "cuba_soft"} : tensor<5x3x8xf32>
  %w5 = snn.param "fc5.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x8xf32>
  %a5 = snn.linear %s4, %w5 : tensor<5x3x8xf32>, tensor<4x8xf32> -> tensor<5x3x4xf32>
  // Leaky-integrator readout from a non-zero membrane.
  %o = snn.li %a5 {k = 0.25, c = 1.0, v_init = 0.05, snn.name = "readout"} : tensor<5x3x4xf32>
  return %o : tensor<5x3x4xf32>
}
