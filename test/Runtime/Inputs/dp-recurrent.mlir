// A small recurrent spiking net for the data parallel tests (the step form of
// examples/recurrent.mlir): BATCH is replaced by the per-rank batch (sed).
func.func @forward(%x: tensor<6xBATCHx10xf32>) -> tensor<6xBATCHx3xf32> {
  %w_in = snn.param "rec.input.weight" {init = #snn.init<kaiming_uniform>} : tensor<12x10xf32>
  %w_rec = snn.param "rec.recurrent.weight" {init = #snn.init<normal>, init_scale = 0.3} : tensor<12x12xf32>
  %v0 = arith.constant dense<0.0> : tensor<BATCHx12xf32>
  %s0 = arith.constant dense<0.0> : tensor<BATCHx12xf32>
  %spikes, %vT, %sT = snn.time_loop ins(%x : tensor<6xBATCHx10xf32>)
      iter_args(%v0, %s0 : tensor<BATCHx12xf32>, tensor<BATCHx12xf32>)
      -> tensor<6xBATCHx12xf32>, tensor<BATCHx12xf32>, tensor<BATCHx12xf32> {
  ^bb0(%xt: tensor<BATCHx10xf32>, %v: tensor<BATCHx12xf32>, %s_prev: tensor<BATCHx12xf32>):
    %i_in = snn.linear %xt, %w_in : tensor<BATCHx10xf32>, tensor<12x10xf32> -> tensor<BATCHx12xf32>
    %i_rec = snn.linear %s_prev, %w_rec : tensor<BATCHx12xf32>, tensor<12x12xf32> -> tensor<BATCHx12xf32>
    %i = snn.add %i_in, %i_rec : tensor<BATCHx12xf32>
    %s, %vn = snn.lif_step %i, %v {k = 0.5, c = 1.0, reset = #snn.reset<soft>} : tensor<BATCHx12xf32>
    snn.yield %s, %vn, %s : tensor<BATCHx12xf32>, tensor<BATCHx12xf32>, tensor<BATCHx12xf32>
  }
  %w_out = snn.param "readout.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x12xf32>
  %h = snn.linear %spikes, %w_out : tensor<6xBATCHx12xf32>, tensor<3x12xf32> -> tensor<6xBATCHx3xf32>
  %m = snn.li %h {k = 0.5, c = 1.0, snn.name = "readout"} : tensor<6xBATCHx3xf32>
  return %m : tensor<6xBATCHx3xf32>
}
