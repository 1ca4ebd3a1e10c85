// Event-driven layers for event-kernels.test: K = 12000 and N = 1025 (the
// index list does not fit in shared memory, more output groups than
// threads: per-tile form), K = 1025 and N = 12000 (compacted, threads loop
// over output groups), K = 12000 and N = 64 (compacted in chunks), N = 48
// (4 outputs per thread), N = 30.
func.func @forward(%x: tensor<4x8x12000xf32>) -> tensor<4x8x30xf32> {
  %wa = snn.param "tile.weight" {init = #snn.init<kaiming_uniform>} : tensor<1025x12000xf32>
  %ha = snn.linear %x, %wa : tensor<4x8x12000xf32>, tensor<1025x12000xf32> -> tensor<4x8x1025xf32>
  %sa = snn.lif %ha {k = 0.5, c = 0.5, snn.name = "lifa"} : tensor<4x8x1025xf32>
  %wb = snn.param "back.weight" {init = #snn.init<kaiming_uniform>} : tensor<12000x1025xf32>
  %hb = snn.linear %sa, %wb : tensor<4x8x1025xf32>, tensor<12000x1025xf32> -> tensor<4x8x12000xf32>
  %sb = snn.lif %hb {k = 0.5, c = 0.5, snn.name = "lifb"} : tensor<4x8x12000xf32>
  %w1 = snn.param "wide.weight" {init = #snn.init<kaiming_uniform>} : tensor<64x12000xf32>
  %h1 = snn.linear %sb, %w1 : tensor<4x8x12000xf32>, tensor<64x12000xf32> -> tensor<4x8x64xf32>
  %s1 = snn.lif %h1 {k = 0.5, c = 0.5, snn.name = "lif1"} : tensor<4x8x64xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<48x64xf32>
  %b2 = snn.param "fc2.bias" {init = #snn.init<uniform>, init_scale = 0.1} : tensor<48xf32>
  %h2 = snn.linear %s1, %w2, %b2 : tensor<4x8x64xf32>, tensor<48x64xf32>, tensor<48xf32> -> tensor<4x8x48xf32>
  %s2 = snn.lif %h2 {k = 0.5, c = 0.5, snn.name = "lif2"} : tensor<4x8x48xf32>
  %w3 = snn.param "fc3.weight" {init = #snn.init<kaiming_uniform>} : tensor<30x48xf32>
  %h3 = snn.linear %s2, %w3 : tensor<4x8x48xf32>, tensor<30x48xf32> -> tensor<4x8x30xf32>
  return %h3 : tensor<4x8x30xf32>
}
