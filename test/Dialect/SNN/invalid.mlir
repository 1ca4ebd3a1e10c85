// RUN: snn-opt %s -split-input-file -verify-diagnostics

func.func @lif_rank(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{expects a time-leading input [T, B, features...] (rank >= 3) but got 'tensor<2x3xf32>'; put time first, then batch}}
  %s = snn.lif %x : tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}

// -----

func.func @step_rank(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{expects a per-step input [B, features...] (rank >= 2) but got 'tensor<3xf32>'}}
  %s, %v = snn.lif_step %x, %x : tensor<3xf32>
  return %s : tensor<3xf32>
}

// -----

func.func @per_neuron_shape(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{per-neuron parameter 'v_th' has shape [2] but the layer's neurons have shape [3]; give one value per neuron or a scalar}}
  %s = snn.lif %x {v_th = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<4x2x3xf32>
  return %s : tensor<4x2x3xf32>
}

// -----

func.func @leak_range(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{leak 'k' = 1.5 is outside [0, 1]}}
  %s = snn.lif %x {k = 1.5} : tensor<4x2x3xf32>
  return %s : tensor<4x2x3xf32>
}

// -----

func.func @leak_range_per_neuron(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{leak 'k' = -0.5 is outside [0, 1]}}
  %s = snn.li %x {k = dense<[0.5, -0.5, 0.1]> : tensor<3xf32>} : tensor<4x2x3xf32>
  return %s : tensor<4x2x3xf32>
}

// -----

func.func @synapse_leak_range(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{leak 'k_syn' = 2 is outside [0, 1]}}
  %s = snn.cuba_lif %x {k_syn = 2.0} : tensor<4x2x3xf32>
  return %s : tensor<4x2x3xf32>
}

// -----

func.func @scalar_param_type(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{attribute 'v_th' failed to satisfy constraint: scalar f64 or per-neuron dense float tensor}}
  %s = snn.lif %x {v_th = 1.0 : f32} : tensor<4x2x3xf32>
  return %s : tensor<4x2x3xf32>
}

// -----

func.func @surrogate_band_zero(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{surrogate 'sigmoid' needs grad_band > 0 (the half-width of the band |H - v_th| <= B where the gradient is kept; inf keeps all of it), got 0}}
  %s = snn.lif %x {surrogate = #snn.surrogate<sigmoid, alpha = 4.0, grad_band = 0.0>} : tensor<4x2x3xf32>
  return %s : tensor<4x2x3xf32>
}

// -----

func.func @surrogate_band_negative(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{surrogate 'triangle' needs grad_band > 0}}
  %s = snn.if %x {surrogate = #snn.surrogate<triangle, alpha = 1.0, grad_band = -0.5>} : tensor<4x2x3xf32>
  return %s : tensor<4x2x3xf32>
}

// -----

func.func @surrogate_band_nan(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{surrogate 'atan' needs grad_band > 0}}
  %s = snn.lif %x {surrogate = #snn.surrogate<atan, alpha = 2.0, grad_band = 0x7FF8000000000000 : f64>} : tensor<4x2x3xf32>
  return %s : tensor<4x2x3xf32>
}

// -----

func.func @surrogate_alpha(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{surrogate 'atan' needs alpha > 0}}
  %s = snn.lif %x {surrogate = #snn.surrogate<atan, alpha = 0.0>} : tensor<4x2x3xf32>
  return %s : tensor<4x2x3xf32>
}

// -----

func.func @plif_w(%x: tensor<4x2x3xf32>, %w: tensor<2xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{leak parameter 'w' has shape [2] but must be [1] (one leak for the layer) or [3] (one per neuron)}}
  %s = snn.plif %x, %w : tensor<4x2x3xf32>, tensor<2xf32>
  return %s : tensor<4x2x3xf32>
}

// -----

func.func @neuron_types(%x: tensor<2x3xf32>, %v: tensor<2x4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{all of {input, v, spikes, v_next} have same type}}
  %s, %vn = "snn.lif_step"(%x, %v) : (tensor<2x3xf32>, tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<2x4xf32>)
  return %s : tensor<2x3xf32>
}

// -----

func.func @linear_input_rank(%x: tensor<8xf32>, %w: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expects an input [..., features] with at least one leading (batch) dim, got [8]}}
  %y = snn.linear %x, %w : tensor<8xf32>, tensor<4x8xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @linear_weight_rank(%x: tensor<2x8xf32>, %w: tensor<4x8x1xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{expects a weight [out_features, in_features], got [4, 8, 1]}}
  %y = snn.linear %x, %w : tensor<2x8xf32>, tensor<4x8x1xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @linear_features(%x: tensor<8x64x700xf32>, %w: tensor<512x784xf32>) -> tensor<8x64x512xf32> {
  // expected-error @+1 {{'snn.linear' op input has 700 features but weight expects 784}}
  %y = snn.linear %x, %w : tensor<8x64x700xf32>, tensor<512x784xf32> -> tensor<8x64x512xf32>
  return %y : tensor<8x64x512xf32>
}

// -----

func.func @linear_bias(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %b: tensor<5xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{bias has shape [5] but the layer has 4 output features}}
  %y = snn.linear %x, %w, %b : tensor<2x8xf32>, tensor<4x8xf32>, tensor<5xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @linear_result(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{result has shape [2, 5] but input [2, 8] and weight [4, 8] give [2, 4]}}
  %y = snn.linear %x, %w : tensor<2x8xf32>, tensor<4x8xf32> -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

func.func @conv_input_rank(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<4x6x6xf32> {
  // expected-error @+1 {{expects an input [..., C, H, W] with at least one leading (batch) dim, got [3, 8, 8]}}
  %y = snn.conv2d %x, %w : tensor<3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<4x6x6xf32>
  return %y : tensor<4x6x6xf32>
}

// -----

func.func @conv_weight_rank(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<2x4x6x6xf32> {
  // expected-error @+1 {{expects a weight [out_channels, in_channels / groups, KH, KW], got [4, 3, 3]}}
  %y = snn.conv2d %x, %w : tensor<2x3x8x8xf32>, tensor<4x3x3xf32> -> tensor<2x4x6x6xf32>
  return %y : tensor<2x4x6x6xf32>
}

// -----

func.func @conv_stride(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32> {
  // expected-error @+1 {{'stride' must be > 0, got [0, 1]}}
  %y = snn.conv2d %x, %w {stride = array<i64: 0, 1>} : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  return %y : tensor<2x4x6x6xf32>
}

// -----

func.func @conv_padding_count(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32> {
  // expected-error @+1 {{attribute 'padding' failed to satisfy constraint: i64 dense array attribute with 2 or 4 elements}}
  %y = snn.conv2d %x, %w {padding = array<i64: 1, 0, 0>} : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  return %y : tensor<2x4x6x6xf32>
}

// -----

func.func @conv_asymmetric_shape(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x2x2xf32>) -> tensor<2x4x8x8xf32> {
  // expected-error @+1 {{result has shape [2, 4, 8, 8] but the convolution gives [2, 4, 9, 8]}}
  %y = snn.conv2d %x, %w {padding = array<i64: 1, 0, 1, 1>} : tensor<2x3x8x8xf32>, tensor<4x3x2x2xf32> -> tensor<2x4x8x8xf32>
  return %y : tensor<2x4x8x8xf32>
}

// -----

func.func @conv_padding(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32> {
  // expected-error @+1 {{'padding' must be >= 0, got [-1, 0]}}
  %y = snn.conv2d %x, %w {padding = array<i64: -1, 0>} : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  return %y : tensor<2x4x6x6xf32>
}

// -----

func.func @conv_dilation(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32> {
  // expected-error @+1 {{'dilation' must be > 0, got [1, 0]}}
  %y = snn.conv2d %x, %w {dilation = array<i64: 1, 0>} : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  return %y : tensor<2x4x6x6xf32>
}

// -----

func.func @conv_pair(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32> {
  // expected-error @+1 {{attribute 'stride' failed to satisfy constraint}}
  %y = snn.conv2d %x, %w {stride = array<i64: 1, 1, 1>} : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  return %y : tensor<2x4x6x6xf32>
}

// -----

func.func @conv_groups_input(%x: tensor<2x3x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<2x4x6x6xf32> {
  // expected-error @+1 {{input has 3 channels, which is not divisible by groups = 2}}
  %y = snn.conv2d %x, %w {groups = 2} : tensor<2x3x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<2x4x6x6xf32>
  return %y : tensor<2x4x6x6xf32>
}

// -----

func.func @conv_channels(%x: tensor<2x4x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32> {
  // expected-error @+1 {{input has 4 channels (4 per group) but weight expects 3 per group}}
  %y = snn.conv2d %x, %w : tensor<2x4x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  return %y : tensor<2x4x6x6xf32>
}

// -----

func.func @conv_groups_output(%x: tensor<2x4x8x8xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<2x3x6x6xf32> {
  // expected-error @+1 {{weight has 3 output channels, not divisible by groups = 2}}
  %y = snn.conv2d %x, %w {groups = 2} : tensor<2x4x8x8xf32>, tensor<3x2x3x3xf32> -> tensor<2x3x6x6xf32>
  return %y : tensor<2x3x6x6xf32>
}

// -----

func.func @conv_bias(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<2x4x6x6xf32> {
  // expected-error @+1 {{bias has shape [3] but the layer has 4 output channels}}
  %y = snn.conv2d %x, %w, %b : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32> -> tensor<2x4x6x6xf32>
  return %y : tensor<2x4x6x6xf32>
}

// -----

func.func @conv_kernel_too_large(%x: tensor<2x3x2x2xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x1x1xf32> {
  // expected-error @+1 {{kernel [3, 3] (dilation [1, 1]) is larger than the padded input [2, 2]}}
  %y = snn.conv2d %x, %w : tensor<2x3x2x2xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x1x1xf32>
  return %y : tensor<2x4x1x1xf32>
}

// -----

func.func @conv_result(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32> {
  // expected-error @+1 {{result has shape [2, 4, 8, 8] but the convolution gives [2, 4, 6, 6]}}
  %y = snn.conv2d %x, %w : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x8x8xf32>
  return %y : tensor<2x4x8x8xf32>
}

// -----

func.func @pool_rank(%x: tensor<3x8x8xf32>) -> tensor<3x4x4xf32> {
  // expected-error @+1 {{expects an input [..., C, H, W] with at least one leading (batch) dim, got [3, 8, 8]}}
  %y = snn.avg_pool2d %x {kernel_size = array<i64: 2, 2>} : tensor<3x8x8xf32> -> tensor<3x4x4xf32>
  return %y : tensor<3x4x4xf32>
}

// -----

func.func @pool_kernel(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32> {
  // expected-error @+1 {{'kernel_size' must be > 0, got [0, 2]}}
  %y = snn.max_pool2d %x {kernel_size = array<i64: 0, 2>} : tensor<2x3x8x8xf32> -> tensor<2x3x4x4xf32>
  return %y : tensor<2x3x4x4xf32>
}

// -----

func.func @pool_stride(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32> {
  // expected-error @+1 {{'stride' must be > 0, got [2, -1]}}
  %y = snn.sum_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, -1>} : tensor<2x3x8x8xf32> -> tensor<2x3x4x4xf32>
  return %y : tensor<2x3x4x4xf32>
}

// -----

func.func @pool_negative_padding(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32> {
  // expected-error @+1 {{'padding' must be >= 0, got [0, -1]}}
  %y = snn.avg_pool2d %x {kernel_size = array<i64: 2, 2>, padding = array<i64: 0, -1>} : tensor<2x3x8x8xf32> -> tensor<2x3x4x4xf32>
  return %y : tensor<2x3x4x4xf32>
}

// -----

func.func @pool_padding(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x5x5xf32> {
  // expected-error @+1 {{padding [2, 2] must be at most half of kernel_size [2, 2]}}
  %y = snn.avg_pool2d %x {kernel_size = array<i64: 2, 2>, padding = array<i64: 2, 2>} : tensor<2x3x8x8xf32> -> tensor<2x3x5x5xf32>
  return %y : tensor<2x3x5x5xf32>
}

// -----

func.func @pool_kernel_too_large(%x: tensor<2x3x2x2xf32>) -> tensor<2x3x1x1xf32> {
  // expected-error @+1 {{kernel_size [3, 3] is larger than the padded input [2, 2]}}
  %y = snn.max_pool2d %x {kernel_size = array<i64: 3, 3>} : tensor<2x3x2x2xf32> -> tensor<2x3x1x1xf32>
  return %y : tensor<2x3x1x1xf32>
}

// -----

func.func @pool_result(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32> {
  // expected-error @+1 {{result has shape [2, 3, 8, 8] but pooling gives [2, 3, 4, 4]}}
  %y = snn.avg_pool2d %x {kernel_size = array<i64: 2, 2>} : tensor<2x3x8x8xf32> -> tensor<2x3x8x8xf32>
  return %y : tensor<2x3x8x8xf32>
}

// -----

func.func @bn_rank(%x: tensor<3x4x4xf32>, %g: tensor<3xf32>) -> tensor<3x4x4xf32> {
  // expected-error @+1 {{expects an input [..., C, H, W] with at least one leading (batch) dim for spatial_rank = 2, got [3, 4, 4]}}
  %y = snn.batch_norm %x, %g, %g, %g, %g : tensor<3x4x4xf32>, tensor<3xf32>
  return %y : tensor<3x4x4xf32>
}

// -----

func.func @bn_channels(%x: tensor<2x3x4x4xf32>, %g: tensor<4xf32>) -> tensor<2x3x4x4xf32> {
  // expected-error @+1 {{'gamma' has shape [4] but the input has 3 channels (dim 1 with spatial_rank = 2)}}
  %y = snn.batch_norm %x, %g, %g, %g, %g : tensor<2x3x4x4xf32>, tensor<4xf32>
  return %y : tensor<2x3x4x4xf32>
}

// -----

func.func @bn_eps(%x: tensor<2x3xf32>, %g: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{eps must be > 0}}
  %y = snn.batch_norm %x, %g, %g, %g, %g {spatial_rank = 0, eps = 0.0} : tensor<2x3xf32>, tensor<3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @bn_momentum(%x: tensor<2x3xf32>, %g: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{momentum 1.5 must be in [0, 1]}}
  %y = snn.batch_norm %x, %g, %g, %g, %g {spatial_rank = 0, momentum = 1.5} : tensor<2x3xf32>, tensor<3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @bn_param_types(%x: tensor<2x3xf32>, %g: tensor<3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{all of {gamma, beta, running_mean, running_var} have same type}}
  %y = "snn.batch_norm"(%x, %g, %b, %g, %g) {spatial_rank = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @flatten_rank(%x: tensor<2x3xf32>) -> tensor<2x3x1xf32> {
  // expected-error @+1 {{result shape [2, 3, 1] must keep some leading dims of [2, 3] and merge the rest}}
  %y = snn.flatten %x : tensor<2x3xf32> -> tensor<2x3x1xf32>
  return %y : tensor<2x3x1xf32>
}

// -----

func.func @flatten_leading(%x: tensor<4x2x3x3xf32>) -> tensor<4x3x6xf32> {
  // expected-error @+1 {{result [4, 3, 6] changes the leading dims of [4, 2, 3, 3]}}
  %y = snn.flatten %x : tensor<4x2x3x3xf32> -> tensor<4x3x6xf32>
  return %y : tensor<4x3x6xf32>
}

// -----

func.func @flatten_count(%x: tensor<4x2x3x3xf32>) -> tensor<4x2x8xf32> {
  // expected-error @+1 {{merging the trailing dims of [4, 2, 3, 3] gives 9 elements, not 8}}
  %y = snn.flatten %x : tensor<4x2x3x3xf32> -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}

// -----

func.func @dropout_p(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{p = 1 must be in [0, 1) (the probability of dropping an element)}}
  %y = snn.dropout %x {p = 1.0} : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @dropout_negative(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{p = -0.1 must be in [0, 1)}}
  %y = snn.dropout %x {p = -0.1} : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @add_types(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %y = "snn.add"(%a, %b) : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @param_name() -> tensor<3xf32> {
  // expected-error @+1 {{needs a non-empty name (the checkpoint key, e.g. "fc1.weight")}}
  %p = snn.param "" : tensor<3xf32>
  return %p : tensor<3xf32>
}

// -----

func.func @param_dynamic() -> tensor<?xf32> {
  // expected-error @+1 {{'w' must have a static shape, got 'tensor<?xf32>'}}
  %p = snn.param "w" : tensor<?xf32>
  return %p : tensor<?xf32>
}

// -----

func.func @param_value_shape() -> tensor<3xf32> {
  // expected-error @+1 {{'w' has value of shape [4] but is declared as 'tensor<3xf32>'}}
  %p = snn.param "w" {value = dense<1.0> : tensor<4xf32>} : tensor<3xf32>
  return %p : tensor<3xf32>
}

// -----

func.func @param_value_type() -> tensor<3xf32> {
  // expected-error @+1 {{'w' has a non-float value of type 'tensor<3xi32>'}}
  %p = snn.param "w" {value = dense<1> : tensor<3xi32>} : tensor<3xf32>
  return %p : tensor<3xf32>
}

// -----

func.func @param_init_scale() -> tensor<3xf32> {
  // expected-error @+1 {{'b': init = uniform needs init_scale (the value, the bound, or the standard deviation)}}
  %p = snn.param "b" {init = #snn.init<uniform>} : tensor<3xf32>
  return %p : tensor<3xf32>
}

// -----

func.func @param_kaiming_rank() -> tensor<3xf32> {
  // expected-error @+1 {{'b': kaiming_uniform needs a weight of rank >= 2}}
  %p = snn.param "b" {init = #snn.init<kaiming_uniform>} : tensor<3xf32>
  return %p : tensor<3xf32>
}

// -----

func.func @param_twice() -> tensor<3xf32> {
  // expected-error @+1 {{'w' is declared as 'tensor<3xf32>' here but as 'tensor<4xf32>' elsewhere; one name is one tensor}}
  %p = snn.param "w" : tensor<3xf32>
  %q = snn.param "w" : tensor<4xf32>
  return %p : tensor<3xf32>
}

// -----

func.func @loop_no_steps(%v0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{has no time-leading inputs, so it needs num_steps to know how many steps to run}}
  %vT = snn.time_loop iter_args(%v0 : tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%v: tensor<2x3xf32>):
    snn.yield %v : tensor<2x3xf32>
  }
  return %vT : tensor<2x3xf32>
}

// -----

func.func @loop_steps_mismatch(%x: tensor<8x2x3xf32>) -> tensor<8x2x3xf32> {
  // expected-error @+1 {{input #0 has 8 time steps but the loop runs 4}}
  %o = snn.time_loop ins(%x : tensor<8x2x3xf32>) {num_steps = 4 : i64} -> tensor<8x2x3xf32> {
  ^bb0(%xt: tensor<2x3xf32>):
    snn.yield %xt : tensor<2x3xf32>
  }
  return %o : tensor<8x2x3xf32>
}

// -----

func.func @loop_inputs_disagree(%x: tensor<8x2x3xf32>, %y: tensor<4x2x3xf32>) -> tensor<8x2x3xf32> {
  // expected-error @+1 {{input #1 has 4 time steps but the loop runs 8}}
  %o = snn.time_loop ins(%x, %y : tensor<8x2x3xf32>, tensor<4x2x3xf32>) -> tensor<8x2x3xf32> {
  ^bb0(%xt: tensor<2x3xf32>, %yt: tensor<2x3xf32>):
    snn.yield %xt : tensor<2x3xf32>
  }
  return %o : tensor<8x2x3xf32>
}

// -----

func.func @loop_scalar_input(%x: tensor<f32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{input #0 is a scalar; inputs must be time-leading [T, ...]}}
  %o = snn.time_loop ins(%x : tensor<f32>) {num_steps = 4 : i64} -> tensor<4x2xf32> {
  ^bb0(%xt: tensor<f32>):
    %c = arith.constant dense<0.0> : tensor<2xf32>
    snn.yield %c : tensor<2xf32>
  }
  return %o : tensor<4x2xf32>
}

// -----

func.func @loop_too_few_results(%x: tensor<8x2x3xf32>, %v0: tensor<2x3xf32>) {
  // expected-error @+1 {{has 2 loop-carried values but only 1 results; the final state is returned after the stacked outputs}}
  %o = snn.time_loop ins(%x : tensor<8x2x3xf32>) iter_args(%v0, %v0 : tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%xt: tensor<2x3xf32>, %a: tensor<2x3xf32>, %b: tensor<2x3xf32>):
    snn.yield %a : tensor<2x3xf32>
  }
  return
}

// -----

func.func @loop_result_not_stacked(%x: tensor<8x2x3xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{result #0 'tensor<4x2x3xf32>' must be stacked over the 8 time steps [T, ...]}}
  %o = snn.time_loop ins(%x : tensor<8x2x3xf32>) -> tensor<4x2x3xf32> {
  ^bb0(%xt: tensor<2x3xf32>):
    snn.yield %xt : tensor<2x3xf32>
  }
  return %o : tensor<4x2x3xf32>
}

// -----

func.func @loop_final_state(%x: tensor<8x2x3xf32>, %v0: tensor<2x3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{final state #0 has type 'tensor<2x4xf32>' but its initial value has 'tensor<2x3xf32>'}}
  %o, %v = snn.time_loop ins(%x : tensor<8x2x3xf32>) iter_args(%v0 : tensor<2x3xf32>) -> tensor<8x2x3xf32>, tensor<2x4xf32> {
  ^bb0(%xt: tensor<2x3xf32>, %a: tensor<2x3xf32>):
    snn.yield %xt, %a : tensor<2x3xf32>, tensor<2x3xf32>
  }
  return %v : tensor<2x4xf32>
}

// -----

func.func @loop_block_args(%x: tensor<8x2x3xf32>) -> tensor<8x2x3xf32> {
  // expected-error @+1 {{body takes 2 arguments but the loop has 1 inputs and 0 loop-carried values (one argument each)}}
  %o = snn.time_loop ins(%x : tensor<8x2x3xf32>) -> tensor<8x2x3xf32> {
  ^bb0(%xt: tensor<2x3xf32>, %extra: tensor<2x3xf32>):
    snn.yield %xt : tensor<2x3xf32>
  }
  return %o : tensor<8x2x3xf32>
}

// -----

func.func @loop_block_input_type(%x: tensor<8x2x3xf32>) -> tensor<8x3x2xf32> {
  // expected-error @+1 {{body argument #0 has type 'tensor<3x2xf32>' but one step of input #0 is 'tensor<2x3xf32>'}}
  %o = snn.time_loop ins(%x : tensor<8x2x3xf32>) -> tensor<8x3x2xf32> {
  ^bb0(%xt: tensor<3x2xf32>):
    snn.yield %xt : tensor<3x2xf32>
  }
  return %o : tensor<8x3x2xf32>
}

// -----

func.func @loop_block_state_type(%x: tensor<8x2x3xf32>, %v0: tensor<2x3xf32>) -> tensor<8x2x3xf32> {
  // expected-error @+1 {{body argument #1 has type 'tensor<3x2xf32>' but loop-carried value #0 is 'tensor<2x3xf32>'}}
  %o, %v = snn.time_loop ins(%x : tensor<8x2x3xf32>) iter_args(%v0 : tensor<2x3xf32>) -> tensor<8x2x3xf32>, tensor<2x3xf32> {
  ^bb0(%xt: tensor<2x3xf32>, %a: tensor<3x2xf32>):
    snn.yield %xt, %xt : tensor<2x3xf32>, tensor<2x3xf32>
  }
  return %o : tensor<8x2x3xf32>
}

// -----

func.func @yield_count(%x: tensor<8x2x3xf32>, %v0: tensor<2x3xf32>) -> tensor<8x2x3xf32> {
  %o, %v = snn.time_loop ins(%x : tensor<8x2x3xf32>) iter_args(%v0 : tensor<2x3xf32>) -> tensor<8x2x3xf32>, tensor<2x3xf32> {
  ^bb0(%xt: tensor<2x3xf32>, %a: tensor<2x3xf32>):
    // expected-error @+1 {{yields 1 values but the loop has 2 results (1 per-step outputs, then 1 next-state values)}}
    snn.yield %xt : tensor<2x3xf32>
  }
  return %o : tensor<8x2x3xf32>
}

// -----

func.func @yield_output_type(%x: tensor<8x2x3xf32>) -> tensor<8x2x3xf32> {
  %o = snn.time_loop ins(%x : tensor<8x2x3xf32>) -> tensor<8x2x3xf32> {
  ^bb0(%xt: tensor<2x3xf32>):
    %c = arith.constant dense<0.0> : tensor<3x2xf32>
    // expected-error @+1 {{per-step output #0 has type 'tensor<3x2xf32>' but the loop result is 'tensor<8x2x3xf32>' (one step: 'tensor<2x3xf32>')}}
    snn.yield %c : tensor<3x2xf32>
  }
  return %o : tensor<8x2x3xf32>
}

// -----

func.func @yield_state_type(%x: tensor<8x2x3xf32>, %v0: tensor<2x3xf32>) -> tensor<8x2x3xf32> {
  %o, %v = snn.time_loop ins(%x : tensor<8x2x3xf32>) iter_args(%v0 : tensor<2x3xf32>) -> tensor<8x2x3xf32>, tensor<2x3xf32> {
  ^bb0(%xt: tensor<2x3xf32>, %a: tensor<2x3xf32>):
    %c = arith.constant dense<0.0> : tensor<3x2xf32>
    // expected-error @+1 {{next state #0 has type 'tensor<3x2xf32>' but the loop carries 'tensor<2x3xf32>'}}
    snn.yield %xt, %c : tensor<2x3xf32>, tensor<3x2xf32>
  }
  return %o : tensor<8x2x3xf32>
}

// -----

func.func @yield_outside_loop(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{expects parent op 'snn.time_loop'}}
  snn.yield %x : tensor<2x3xf32>
}

// -----

func.func @linear_event_driven_crossover(%x: tensor<4x2x8xf32>, %w: tensor<3x8xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{event_driven crossover must be a density in (0, 1] (the input density up to which the event-driven path runs), got 1.5}}
  %y = snn.linear %x, %w {event_driven = 1.5 : f64} : tensor<4x2x8xf32>, tensor<3x8xf32> -> tensor<4x2x3xf32>
  return %y : tensor<4x2x3xf32>
}

// -----

func.func @conv_event_driven_crossover(%x: tensor<2x4x6x6xf32>, %w: tensor<3x4x3x3xf32>) -> tensor<2x3x4x4xf32> {
  // expected-error @+1 {{event_driven crossover must be a density in (0, 1] (the input density up to which the event-driven path runs), got 0}}
  %y = snn.conv2d %x, %w {event_driven = 0.0 : f64} : tensor<2x4x6x6xf32>, tensor<3x4x3x3xf32> -> tensor<2x3x4x4xf32>
  return %y : tensor<2x3x4x4xf32>
}

// -----

func.func @conv_event_driven_groups(%x: tensor<2x4x6x6xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<2x4x4x4xf32> {
  // expected-error @+1 {{event_driven supports groups = 1 only, got 2}}
  %y = snn.conv2d %x, %w {event_driven = 0.1 : f64, groups = 2} : tensor<2x4x6x6xf32>, tensor<4x2x3x3xf32> -> tensor<2x4x4x4xf32>
  return %y : tensor<2x4x4x4xf32>
}
