// Recurrent parametric LIF layers (SpikingJelly's PLIFNode in a recurrent
// net): a PLIF layer with one learned leak per neuron fed back by its own
// spikes of step t-1 through a recurrent weight, driving a second PLIF layer
// with a scalar leak and no input decay; an LI readout. Both stay in the loop,
// which --snn-autodiff unrolls: the leaks' gradients sum over the steps.
func.func @forward(%x: tensor<6x2x3xf32>) -> tensor<6x2x3xf32> {
  %w_in = snn.param "in.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x3xf32>
  %w_rec = snn.param "rec.weight" {init = #snn.init<normal>, init_scale = 0.6} : tensor<5x5xf32>
  %w1 = snn.param "plif1.w" {init = #snn.init<normal>, init_scale = 0.5} : tensor<5xf32>
  %w_12 = snn.param "l2.weight" {init = #snn.init<normal>, init_scale = 0.8} : tensor<4x5xf32>
  %w2 = snn.param "plif2.w" {init = #snn.init<constant>, init_scale = -0.3} : tensor<1xf32>
  %w_out = snn.param "out.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x4xf32>
  %z5 = arith.constant dense<0.0> : tensor<2x5xf32>
  %z4 = arith.constant dense<0.0> : tensor<2x4xf32>
  %s, %v1T, %spT, %v2T = snn.time_loop ins(%x : tensor<6x2x3xf32>)
      iter_args(%z5, %z5, %z4 : tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x4xf32>)
      -> tensor<6x2x4xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x4xf32> {
  ^bb0(%xt: tensor<2x3xf32>, %v1: tensor<2x5xf32>, %sp: tensor<2x5xf32>, %v2: tensor<2x4xf32>):
    %h = snn.linear %xt, %w_in : tensor<2x3xf32>, tensor<5x3xf32> -> tensor<2x5xf32>
    %r = snn.linear %sp, %w_rec : tensor<2x5xf32>, tensor<5x5xf32> -> tensor<2x5xf32>
    %in = snn.add %h, %r : tensor<2x5xf32>
    %s1, %v1n = snn.plif_step %in, %v1, %w1 {v_th = 0.5, reset = #snn.reset<soft>} : tensor<2x5xf32>, tensor<5xf32>
    %i2 = snn.linear %s1, %w_12 : tensor<2x5xf32>, tensor<4x5xf32> -> tensor<2x4xf32>
    %s2, %v2n = snn.plif_step %i2, %v2, %w2 {v_th = 0.4, decay_input = false, v_leak = 0.1} : tensor<2x4xf32>, tensor<1xf32>
    snn.yield %s2, %v1n, %s1, %v2n : tensor<2x4xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x4xf32>
  }
  %y = snn.linear %s, %w_out : tensor<6x2x4xf32>, tensor<3x4xf32> -> tensor<6x2x3xf32>
  %o = snn.li %y {k = 0.4, c = 1.0} : tensor<6x2x3xf32>
  return %o : tensor<6x2x3xf32>
}
