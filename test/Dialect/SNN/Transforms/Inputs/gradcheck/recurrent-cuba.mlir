// A recurrent current-based LIF layer (as snnTorch's RSynaptic exports to
// NIR): its spikes of step t-1 feed its synaptic current through a recurrent
// weight; an LI readout. The loop keeps the CUBA layer (its state is the
// current, the membrane and the previous spikes); --snn-autodiff unrolls it.
func.func @forward(%x: tensor<6x2x3xf32>) -> tensor<6x2x3xf32> {
  %w_in = snn.param "in.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x3xf32>
  %w_rec = snn.param "rec.weight" {init = #snn.init<normal>, init_scale = 0.6} : tensor<5x5xf32>
  %w_out = snn.param "out.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x5xf32>
  %z = arith.constant dense<0.0> : tensor<2x5xf32>
  %s, %iT, %vT, %sT = snn.time_loop ins(%x : tensor<6x2x3xf32>)
      iter_args(%z, %z, %z : tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>)
      -> tensor<6x2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32> {
  ^bb0(%xt: tensor<2x3xf32>, %i: tensor<2x5xf32>, %v: tensor<2x5xf32>, %sp: tensor<2x5xf32>):
    %h = snn.linear %xt, %w_in : tensor<2x3xf32>, tensor<5x3xf32> -> tensor<2x5xf32>
    %r = snn.linear %sp, %w_rec : tensor<2x5xf32>, tensor<5x5xf32> -> tensor<2x5xf32>
    %in = snn.add %h, %r : tensor<2x5xf32>
    %sn, %in_next, %vn = snn.cuba_lif_step %in, %i, %v {k = 0.3, c = 0.7, k_syn = 0.4, c_syn = 0.9, v_th = 0.5} : tensor<2x5xf32>
    snn.yield %sn, %in_next, %vn, %sn : tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>
  }
  %y = snn.linear %s, %w_out : tensor<6x2x5xf32>, tensor<3x5xf32> -> tensor<6x2x3xf32>
  %o = snn.li %y {k = 0.4, c = 1.0} : tensor<6x2x3xf32>
  return %o : tensor<6x2x3xf32>
}
