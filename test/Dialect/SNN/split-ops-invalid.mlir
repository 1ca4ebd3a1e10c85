// RUN: snn-opt %s -split-input-file -verify-diagnostics

// cuba_lif carries two state tensors.
func.func @cuba_one_state(%x: tensor<4x2x3xf32>, %v: tensor<2x3xf32>) {
  // expected-error @+1 {{has 1 init tensors but the layer has 2 state tensors (i, then v)}}
  %s = snn.cuba_lif %x init(%v : tensor<2x3xf32>) : tensor<4x2x3xf32>
  return
}

// -----

func.func @state_with_time(%x: tensor<4x2x3xf32>, %v: tensor<4x2x3xf32>) {
  // expected-error @+1 {{init has type 'tensor<4x2x3xf32>' but a state of this layer is 'tensor<2x3xf32>' (the input without its time dimension)}}
  %s = snn.lif %x init(%v : tensor<4x2x3xf32>) : tensor<4x2x3xf32>
  return
}

// -----

func.func @final_state_type(%x: tensor<4x2x3xf32>) {
  // expected-error @+1 {{final state has type 'tensor<3xf32>' but a state of this layer is 'tensor<2x3xf32>'}}
  %s, %v = snn.if %x : tensor<4x2x3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @init_twice(%x: tensor<4x2x3xf32>, %v: tensor<2x3xf32>) {
  // expected-error @+1 {{has both init(...) operands and 'v_init'; the operands are the initial state, drop the attribute}}
  %s = snn.lif %x init(%v : tensor<2x3xf32>) {v_init = 0.5} : tensor<4x2x3xf32>
  return
}

// -----

func.func @grad_of_missing_init(%x: tensor<4x2x3xf32>) {
  %s = snn.lif %x : tensor<4x2x3xf32>
  // expected-error @+1 {{returns gradients of the initial state but the forward layer has no init(...) operands to differentiate}}
  %gx, %g0 = snn.neuron_bwd %s, %s : tensor<4x2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @grad_final_count(%x: tensor<4x2x3xf32>, %g: tensor<2x3xf32>) {
  %s = snn.lif %x : tensor<4x2x3xf32>
  // expected-error @+1 {{has 2 final state gradients but the forward layer has 1 state tensor}}
  %gx = snn.neuron_bwd %s, %s final(%g, %g : tensor<2x3xf32>, tensor<2x3xf32>) : tensor<4x2x3xf32>
  return
}

// -----

func.func @time_sum_shape(%y: tensor<3x2x5xf32>) {
  // expected-error @+1 {{expects the input [L, ...] and a [1, ...] tensor with the same other dimensions, got 'tensor<3x2x5xf32>' and 'tensor<1x2x4xf32>'}}
  %p = snn.time_sum %y {scale = 1.0 : f64} : tensor<3x2x5xf32> -> tensor<1x2x4xf32>
  return
}

// -----

func.func @dynamic_transfer(%v: tensor<?x3xf32>) {
  // expected-error @+1 {{transfers 'tensor<?x3xf32>', which has a dynamic shape; a time split needs static batch and feature sizes}}
  snn.send %v to next tag 0 : tensor<?x3xf32>
  return
}

// -----

func.func @bad_peer(%v: tensor<2x3xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'peer' [prev, next]}}
  snn.send %v to left tag 0 : tensor<2x3xf32>
  return
}
