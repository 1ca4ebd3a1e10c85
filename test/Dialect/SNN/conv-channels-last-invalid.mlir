// RUN: snn-opt %s -split-input-file -verify-diagnostics

// channels_last reads the weight as [O, KH, KW, C]: an OIHW weight is refused.
func.func @cl_weight_order(%x: tensor<2x8x8x3xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x6x6x4xf32> {
  %w2 = snn.param "w" : tensor<4x3x3x2xf32>
  // expected-error @+1 {{input has 3 channels (3 per group) but weight expects 2 per group (channels_last: input [..., H, W, C], weight [O, KH, KW, C])}}
  %y = snn.conv2d %x, %w2 {channels_last} : tensor<2x8x8x3xf32>, tensor<4x3x3x2xf32> -> tensor<2x6x6x4xf32>
  return %y : tensor<2x6x6x4xf32>
}

// -----

// The result is [..., OH, OW, O]: an NCHW result is refused.
func.func @cl_result(%x: tensor<2x8x8x3xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32> {
  // expected-error @+1 {{result has shape [2, 4, 6, 6] but the convolution gives [2, 6, 6, 4] (channels_last: [..., OH, OW, O])}}
  %y = snn.conv2d %x, %w {channels_last} : tensor<2x8x8x3xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  return %y : tensor<2x4x6x6xf32>
}

// -----

func.func @cl_groups(%x: tensor<2x8x8x4xf32>, %w: tensor<4x3x3x2xf32>) -> tensor<2x6x6x4xf32> {
  // expected-error @+1 {{channels_last supports groups = 1 only, got 2}}
  %y = snn.conv2d %x, %w {channels_last, groups = 2} : tensor<2x8x8x4xf32>, tensor<4x3x3x2xf32> -> tensor<2x6x6x4xf32>
  return %y : tensor<2x6x6x4xf32>
}

// -----

func.func @cl_input_rank(%x: tensor<8x8x3xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<6x6x4xf32> {
  // expected-error @+1 {{expects an input [..., H, W, C] (channels_last) with at least one leading (batch) dim, got [8, 8, 3]}}
  %y = snn.conv2d %x, %w {channels_last} : tensor<8x8x3xf32>, tensor<4x3x3x3xf32> -> tensor<6x6x4xf32>
  return %y : tensor<6x6x4xf32>
}

// -----

func.func @cl_weight_rank(%x: tensor<2x8x8x3xf32>, %w: tensor<4x3x3xf32>) -> tensor<2x6x6x4xf32> {
  // expected-error @+1 {{expects a weight [out_channels, KH, KW, in_channels] (channels_last), got [4, 3, 3]}}
  %y = snn.conv2d %x, %w {channels_last} : tensor<2x8x8x3xf32>, tensor<4x3x3xf32> -> tensor<2x6x6x4xf32>
  return %y : tensor<2x6x6x4xf32>
}

// -----

func.func @cl_kernel_too_large(%x: tensor<2x2x8x3xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x1x6x4xf32> {
  // expected-error @+1 {{kernel [3, 3] (dilation [1, 1]) is larger than the padded input [2, 8]}}
  %y = snn.conv2d %x, %w {channels_last} : tensor<2x2x8x3xf32>, tensor<4x3x3x3xf32> -> tensor<2x1x6x4xf32>
  return %y : tensor<2x1x6x4xf32>
}

// -----

func.func @cl_bwd_layout(%gy: tensor<2x6x6x4xf32>, %x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32> {
  // expected-error @+1 {{channels_last expects an input [..., H, W, C], a weight [O, KH, KW, C] and a grad_output [..., OH, OW, O], got 'tensor<2x3x8x8xf32>', 'tensor<4x3x3x3xf32>' and 'tensor<2x6x6x4xf32>'}}
  %gw = snn.conv2d_bwd %gy, %x, %w {channels_last, has_bias = false, need_gx = false}
      : tensor<2x6x6x4xf32>, tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<4x3x3x3xf32>
  return %gw : tensor<4x3x3x3xf32>
}
