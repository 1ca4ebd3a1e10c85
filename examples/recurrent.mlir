// A recurrent spiking layer in the step form, for spoken digits (SHD: 700
// input channels, 20 classes): T = 100 steps, batch 32, 128 recurrent LIF
// neurons whose spikes of step t-1 feed back through a recurrent weight, and
// a leaky-integrator readout whose membrane, averaged over time, gives the
// class scores.
//
// The recurrence through the previous spikes is loop state that is not a
// neuron membrane: --snn-temporal-fusion hoists the input projection (one
// GEMM over all T*B rows) and the readout out of the loop and keeps only the
// recurrent layer in it; --snn-compile writes that loop as a `time_loop` op
// that snn-run runs step by step (CPU and GPU). Inference only: recurrent
// layers cannot be trained yet.

func.func @forward(%x: tensor<100x32x700xf32>) -> tensor<100x32x20xf32> {
  %w_in = snn.param "rec.input.weight" {init = #snn.init<kaiming_uniform>} : tensor<128x700xf32>
  %w_rec = snn.param "rec.recurrent.weight" {init = #snn.init<normal>, init_scale = 0.05} : tensor<128x128xf32>
  %v0 = arith.constant dense<0.0> : tensor<32x128xf32>
  %s0 = arith.constant dense<0.0> : tensor<32x128xf32>
  %spikes, %vT, %sT = snn.time_loop ins(%x : tensor<100x32x700xf32>)
      iter_args(%v0, %s0 : tensor<32x128xf32>, tensor<32x128xf32>)
      -> tensor<100x32x128xf32>, tensor<32x128xf32>, tensor<32x128xf32> {
  ^bb0(%xt: tensor<32x700xf32>, %v: tensor<32x128xf32>, %s_prev: tensor<32x128xf32>):
    %i_in = snn.linear %xt, %w_in : tensor<32x700xf32>, tensor<128x700xf32> -> tensor<32x128xf32>
    %i_rec = snn.linear %s_prev, %w_rec : tensor<32x128xf32>, tensor<128x128xf32> -> tensor<32x128xf32>
    %i = snn.add %i_in, %i_rec : tensor<32x128xf32>
    %s, %vn = snn.lif_step %i, %v {k = 0.05, c = 1.0, reset = #snn.reset<soft>} : tensor<32x128xf32>
    snn.yield %s, %vn, %s : tensor<32x128xf32>, tensor<32x128xf32>, tensor<32x128xf32>
  }
  %w_out = snn.param "readout.weight" {init = #snn.init<kaiming_uniform>} : tensor<20x128xf32>
  %h = snn.linear %spikes, %w_out : tensor<100x32x128xf32>, tensor<20x128xf32> -> tensor<100x32x20xf32>
  %m = snn.li %h {k = 0.1, c = 1.0, snn.name = "readout"} : tensor<100x32x20xf32>
  return %m : tensor<100x32x20xf32>
}
