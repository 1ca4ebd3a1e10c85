// RUN: snn-opt %s -split-input-file -verify-diagnostics

func.func @loss_labels(%y: tensor<4x2x3xf32>, %l: tensor<5xi32>) {
  // expected-error @+1 {{expects labels [B] with B = 2 (the output's batch), got 'tensor<5xi32>'}}
  %a, %b, %c = snn.loss_ce_rate %y, %l : tensor<4x2x3xf32>, tensor<5xi32> -> tensor<f32>
  return
}

// -----

func.func @loss_rank(%y: tensor<4x2x3x3xf32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expects the network output [T, B, classes], got rank 4}}
  %a, %b, %c = snn.loss_mse_rate %y, %l : tensor<4x2x3x3xf32>, tensor<2xi32> -> tensor<f32>
  return
}

// -----

func.func @loss_max_labels(%y: tensor<4x2x3xf32>, %l: tensor<3xi32>) {
  // expected-error @+1 {{expects labels [B] with B = 2 (the output's batch), got 'tensor<3xi32>'}}
  %a, %b, %c = snn.loss_ce_membrane_max %y, %l : tensor<4x2x3xf32>, tensor<3xi32> -> tensor<f32>
  return
}

// -----

func.func @neuron_bwd_not_neuron(%g: tensor<4x2x3xf32>, %x: tensor<4x2x3xf32>) {
  // expected-error @+1 {{'forward' must be the result of a multi-step neuron op}}
  %gx = snn.neuron_bwd %g, %x : tensor<4x2x3xf32>
  return
}

// -----

func.func @neuron_bwd_plif(%g: tensor<4x2x3xf32>, %x: tensor<4x2x3xf32>, %w: tensor<1xf32>) {
  %s = snn.plif %x, %w : tensor<4x2x3xf32>, tensor<1xf32>
  // expected-error @+1 {{of an snn.plif layer needs a second result, the gradient of its 'w' ('tensor<1xf32>')}}
  %gx = snn.neuron_bwd %g, %s : tensor<4x2x3xf32>
  return
}

// -----

func.func @neuron_bwd_gw(%g: tensor<4x2x3xf32>, %x: tensor<4x2x3xf32>) {
  %s = snn.lif %x : tensor<4x2x3xf32>
  // expected-error @+1 {{has a gradient of 'w' but the forward layer is 'snn.lif', not snn.plif}}
  %gx, %gw = snn.neuron_bwd %g, %s : tensor<4x2x3xf32>, tensor<1xf32>
  return
}

// -----

func.func @linear_bwd_count(%g: tensor<4x2x3xf32>, %x: tensor<4x2x5xf32>, %w: tensor<3x5xf32>) {
  // expected-error @+1 {{has 1 results but need_gx = 1 and has_bias = 0 give 2 (gx?, gw, gb?)}}
  %gw = snn.linear_bwd %g, %x, %w {has_bias = false, need_gx = true}
      : tensor<4x2x3xf32>, tensor<4x2x5xf32>, tensor<3x5xf32> -> tensor<3x5xf32>
  return
}

// -----

func.func @linear_bwd_types(%g: tensor<4x2x3xf32>, %x: tensor<4x2x5xf32>, %w: tensor<3x5xf32>) {
  // expected-error @+1 {{gw has type 'tensor<5x3xf32>' but must have the type of the weight, 'tensor<3x5xf32>'}}
  %gw = snn.linear_bwd %g, %x, %w {has_bias = false, need_gx = false}
      : tensor<4x2x3xf32>, tensor<4x2x5xf32>, tensor<3x5xf32> -> tensor<5x3xf32>
  return
}

// -----

func.func @linear_bwd_gy(%g: tensor<4x2x4xf32>, %x: tensor<4x2x5xf32>, %w: tensor<3x5xf32>) {
  // expected-error @+1 {{grad_output 'tensor<4x2x4xf32>' is not the output of input 'tensor<4x2x5xf32>' and weight 'tensor<3x5xf32>'}}
  %gw = snn.linear_bwd %g, %x, %w {has_bias = false, need_gx = false}
      : tensor<4x2x4xf32>, tensor<4x2x5xf32>, tensor<3x5xf32> -> tensor<3x5xf32>
  return
}

// -----

func.func @pool_bwd_window(%g: tensor<2x3x2x3x3xf32>) {
  // expected-error @+1 {{the window (kernel_size, stride, padding) does not map the input 'tensor<2x3x2x8x8xf32>' to 'tensor<2x3x2x3x3xf32>'}}
  %gx = snn.avg_pool2d_bwd %g {kernel_size = array<i64: 2, 2>} : tensor<2x3x2x3x3xf32> -> tensor<2x3x2x8x8xf32>
  return
}

// -----

func.func @bn_bwd_forward(%g: tensor<4x2x3xf32>, %x: tensor<4x2x3xf32>, %gamma: tensor<3xf32>) {
  // expected-error @+1 {{'forward' must be the result of the snn.batch_norm whose statistics it reads}}
  %gx, %gg, %gb = snn.batch_norm_bwd %g, %x, %gamma, %x : tensor<4x2x3xf32>, tensor<3xf32>
  return
}

// -----

func.func @dropout_bwd_forward(%g: tensor<4x2x3xf32>, %x: tensor<4x2x3xf32>) {
  // expected-error @+1 {{'forward' must be the result of the snn.dropout whose mask it reads}}
  %gx = snn.dropout_bwd %g, %x : tensor<4x2x3xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<4x2x6xf32>) {
  // expected-error @+1 {{needs static types with the same element type and number of elements, got 'tensor<4x2x6xf32>' -> 'tensor<4x2x2x2xf32>'}}
  %y = snn.reshape %x : tensor<4x2x6xf32> -> tensor<4x2x2x2xf32>
  return
}

// -----

func.func @sgd_momentum(%p: tensor<3xf32>, %g: tensor<3xf32>) {
  // expected-error @+1 {{with momentum needs momentum buffer operand}}
  %p2 = snn.sgd %p, %g {lr = 0.1, momentum = 0.9} : tensor<3xf32>
  return
}

// -----

func.func @sgd_lr(%p: tensor<3xf32>, %g: tensor<3xf32>) {
  // expected-error @+1 {{learning rate must be positive, got -1}}
  %p2 = snn.sgd %p, %g {lr = -1.0} : tensor<3xf32>
  return
}

// -----

func.func @adam_betas(%p: tensor<3xf32>, %g: tensor<3xf32>) {
  // expected-error @+1 {{betas must be in [0, 1), got (0.9, 1)}}
  %p2, %m, %v = snn.adam %p, %g, %p, %p {lr = 0.1, beta2 = 1.0} : tensor<3xf32>
  return
}

// -----

func.func @time_slice_index(%x: tensor<4x2x3xf32>) {
  // expected-error @+1 {{index 4 is outside the 4 steps of 'tensor<4x2x3xf32>'}}
  %y = snn.time_slice %x {index = 4} : tensor<4x2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @time_slice_shape(%x: tensor<4x2x3xf32>) {
  // expected-error @+1 {{takes [T, ...] to [...], got 'tensor<4x2x3xf32>' -> 'tensor<2x2xf32>'}}
  %y = snn.time_slice %x {index = 0} : tensor<4x2x3xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @time_stack_shape(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) {
  // expected-error @+1 {{stacks 2 x 'tensor<2x3xf32>' into 'tensor<3x2x3xf32>'; expected 'tensor<2x2x3xf32>'}}
  %y = snn.time_stack %a, %b : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<3x2x3xf32>
  return
}

// -----

func.func @step_bwd_forward(%g: tensor<2x3xf32>, %x: tensor<2x3xf32>, %w: tensor<1xf32>) {
  %s, %vn = snn.plif_step %x, %x, %w : tensor<2x3xf32>, tensor<1xf32>
  // expected-error @+1 {{'forward' must be the first result of snn.lif_step, snn.if_step or snn.li_step}}
  %gx, %gv = snn.neuron_step_bwd %g, %g, %s : tensor<2x3xf32>
  return
}

// -----

func.func @step_bwd_first_result(%g: tensor<2x3xf32>, %x: tensor<2x3xf32>, %v: tensor<2x3xf32>) {
  %s, %vn = snn.lif_step %x, %v : tensor<2x3xf32>
  // expected-error @+1 {{'forward' must be the first result of its step op}}
  %gx, %gv = snn.neuron_step_bwd %g, %g, %vn : tensor<2x3xf32>
  return
}

// -----

func.func @plif_step_bwd_forward(%g: tensor<2x3xf32>, %x: tensor<2x3xf32>, %v: tensor<2x3xf32>, %w: tensor<1xf32>) {
  %s, %vn = snn.lif_step %x, %v : tensor<2x3xf32>
  // expected-error @+1 {{'forward' must be the spikes of an snn.plif_step}}
  %gx, %gv, %gw = snn.plif_step_bwd %g, %g, %s, %v, %w : tensor<2x3xf32>, tensor<1xf32>
  return
}

// -----

func.func @plif_step_bwd_state(%g: tensor<2x3xf32>, %x: tensor<2x3xf32>, %v: tensor<2x3xf32>, %w: tensor<1xf32>) {
  %s, %vn = snn.plif_step %x, %v, %w : tensor<2x3xf32>, tensor<1xf32>
  // expected-error @+1 {{'state' must be the membrane operand of its snn.plif_step}}
  %gx, %gv, %gw = snn.plif_step_bwd %g, %g, %s, %vn, %w : tensor<2x3xf32>, tensor<1xf32>
  return
}

// -----

func.func @plif_step_bwd_weight(%g: tensor<2x3xf32>, %x: tensor<2x3xf32>, %v: tensor<2x3xf32>, %w: tensor<1xf32>, %w2: tensor<1xf32>) {
  %s, %vn = snn.plif_step %x, %v, %w : tensor<2x3xf32>, tensor<1xf32>
  // expected-error @+1 {{'w' must be the weight of its snn.plif_step}}
  %gx, %gv, %gw = snn.plif_step_bwd %g, %g, %s, %v, %w2 : tensor<2x3xf32>, tensor<1xf32>
  return
}

// -----

func.func @cuba_step_bwd_forward(%g: tensor<2x3xf32>, %x: tensor<2x3xf32>, %v: tensor<2x3xf32>) {
  %s, %vn = snn.lif_step %x, %v : tensor<2x3xf32>
  // expected-error @+1 {{'forward' must be the spikes of an snn.cuba_lif_step}}
  %gx, %gi, %gv = snn.cuba_lif_step_bwd %g, %g, %g, %s : tensor<2x3xf32>
  return
}

// -----

func.func @linear_bwd_bad_crossover(%gy: tensor<4x3xf32>, %x: tensor<4x5xf32>, %w: tensor<3x5xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{event_driven crossover must be a density in (0, 1] (the grad_output density up to which the event-driven path runs), got 0}}
  %g = snn.linear_bwd %gy, %x, %w {has_bias = false, need_gx = false, event_driven = 0.0 : f64} : tensor<4x3xf32>, tensor<4x5xf32>, tensor<3x5xf32> -> tensor<3x5xf32>
  return %g : tensor<3x5xf32>
}
