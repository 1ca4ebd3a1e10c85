// Every multi-step neuron model with a recordable state: per-neuron and
// soft-reset LIF, IF, PLIF, CUBA-LIF (each its generated record kernel).
func.func @forward(%x: tensor<6x2x5xf32>) -> tensor<6x2x4xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x5xf32>
  %h = snn.linear %x, %w1 : tensor<6x2x5xf32>, tensor<4x5xf32> -> tensor<6x2x4xf32>
  %s0 = snn.lif %h {k = dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf64>, c = 1.0, v_th = 0.8, reset = #snn.reset<soft>, snn.name = "soft"} : tensor<6x2x4xf32>
  %s1 = snn.if %s0 {c = 0.7, snn.name = "if"} : tensor<6x2x4xf32>
  %pw = snn.param "plif.w" {init = #snn.init<zeros>} : tensor<1xf32>
  %s2 = snn.plif %h, %pw {decay_input = false, snn.name = "plif"} : tensor<6x2x4xf32>, tensor<1xf32>
  %s12 = snn.add %s1, %s2 : tensor<6x2x4xf32>
  %s3 = snn.cuba_lif %h {k_syn = 0.3, c_syn = 1.5, i_init = 0.1, v_init = 0.2, snn.name = "cuba"} : tensor<6x2x4xf32>
  %o = snn.add %s12, %s3 : tensor<6x2x4xf32>
  return %o : tensor<6x2x4xf32>
}
