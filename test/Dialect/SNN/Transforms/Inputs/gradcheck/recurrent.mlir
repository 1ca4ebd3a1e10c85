// A recurrent pair of layers in the step form: a LIF layer (soft reset) fed
// by the input and by the previous step's spikes of an IF layer (hard reset)
// that it drives; an LI readout of the IF spikes. After fusion the two
// spiking layers stay in the time loop, which --snn-autodiff unrolls.
func.func @forward(%x: tensor<5x3x4xf32>) -> tensor<5x3x3xf32> {
  %w_in = snn.param "in.weight" {init = #snn.init<kaiming_uniform>} : tensor<6x4xf32>
  %b_in = snn.param "in.bias" {init = #snn.init<uniform>, init_scale = 0.4} : tensor<6xf32>
  %w_fb = snn.param "feedback.weight" {init = #snn.init<normal>, init_scale = 0.6} : tensor<6x5xf32>
  %w_12 = snn.param "l2.weight" {init = #snn.init<normal>, init_scale = 0.8} : tensor<5x6xf32>
  %w_out = snn.param "out.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x5xf32>
  %z6 = arith.constant dense<0.0> : tensor<3x6xf32>
  %z5 = arith.constant dense<0.0> : tensor<3x5xf32>
  %s2, %v1T, %v2T, %s2T = snn.time_loop ins(%x : tensor<5x3x4xf32>)
      iter_args(%z6, %z5, %z5 : tensor<3x6xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
      -> tensor<5x3x5xf32>, tensor<3x6xf32>, tensor<3x5xf32>, tensor<3x5xf32> {
  ^bb0(%xt: tensor<3x4xf32>, %v1: tensor<3x6xf32>, %v2: tensor<3x5xf32>, %s2p: tensor<3x5xf32>):
    %h = snn.linear %xt, %w_in, %b_in : tensor<3x4xf32>, tensor<6x4xf32>, tensor<6xf32> -> tensor<3x6xf32>
    %fb = snn.linear %s2p, %w_fb : tensor<3x5xf32>, tensor<6x5xf32> -> tensor<3x6xf32>
    %i1 = snn.add %h, %fb : tensor<3x6xf32>
    %s1, %v1n = snn.lif_step %i1, %v1 {k = 0.3, c = 0.6, v_th = 0.5, reset = #snn.reset<soft>} : tensor<3x6xf32>
    %i2 = snn.linear %s1, %w_12 : tensor<3x6xf32>, tensor<5x6xf32> -> tensor<3x5xf32>
    %s2n, %v2n = snn.if_step %i2, %v2 {c = 0.8, v_th = 0.6} : tensor<3x5xf32>
    snn.yield %s2n, %v1n, %v2n, %s2n : tensor<3x5xf32>, tensor<3x6xf32>, tensor<3x5xf32>, tensor<3x5xf32>
  }
  %y = snn.linear %s2, %w_out : tensor<5x3x5xf32>, tensor<3x5xf32> -> tensor<5x3x3xf32>
  %o = snn.li %y {k = 0.4, c = 1.0} : tensor<5x3x3xf32>
  return %o : tensor<5x3x3xf32>
}
