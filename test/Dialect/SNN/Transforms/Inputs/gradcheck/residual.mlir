// PLIF (its decay weight trained too) whose spikes feed a LIF layer and, by a
// skip connection, the sum after it (a triangle surrogate there); CUBA-LIF
// (atan) on the scaled sum; fc1.bias is shared by two layers. Compiled with
// the mean-squared rate loss.
func.func @forward(%x: tensor<4x2x5xf32>) -> tensor<4x2x3xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<normal>, init_scale = 0.8} : tensor<5x5xf32>
  %b1 = snn.param "fc1.bias" {init = #snn.init<constant>, init_scale = 0.5} : tensor<5xf32>
  %h1 = snn.linear %x, %w1, %b1 : tensor<4x2x5xf32>, tensor<5x5xf32>, tensor<5xf32> -> tensor<4x2x5xf32>
  %pw = snn.param "plif.w" {init = #snn.init<constant>, init_scale = 0.2} : tensor<1xf32>
  %s1 = snn.plif %h1, %pw {v_th = 0.5} : tensor<4x2x5xf32>, tensor<1xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<normal>, init_scale = 0.8} : tensor<5x5xf32>
  %h2 = snn.linear %s1, %w2, %b1 : tensor<4x2x5xf32>, tensor<5x5xf32>, tensor<5xf32> -> tensor<4x2x5xf32>
  %s2 = snn.lif %h2 {k = 0.4, c = 1.0, v_th = 0.5, surrogate = #snn.surrogate<triangle, alpha = 1.0>} : tensor<4x2x5xf32>
  %r = snn.add %s2, %s1 : tensor<4x2x5xf32>
  %sc = snn.scale %r {scale = 1.5} : tensor<4x2x5xf32>
  %w3 = snn.param "fc3.weight" {init = #snn.init<normal>, init_scale = 0.8} : tensor<3x5xf32>
  %h3 = snn.linear %sc, %w3 : tensor<4x2x5xf32>, tensor<3x5xf32> -> tensor<4x2x3xf32>
  %o = snn.cuba_lif %h3 {k = 0.3, c = 1.0, v_th = 0.4, k_syn = 0.5, c_syn = 1.0, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<4x2x3xf32>
  return %o : tensor<4x2x3xf32>
}
