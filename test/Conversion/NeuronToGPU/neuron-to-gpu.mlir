// RUN: snn-opt %s --snn-neuron-to-gpu --split-input-file | FileCheck %s
// RUN: snn-opt %s --snn-neuron-to-gpu="save-h=false backward=false" --split-input-file | FileCheck %s --check-prefix=INFER

// A thread per 4 neurons: N = 2*64 = 128 neurons, 32 threads, guarded since a
// block has 256. Aligned vector<4xf32> accesses, the state in the loop's
// iter_args, one loop over T = 8. So few threads cannot hide a load's
// latency with each other: the scan loads X up to 16 steps ahead (here
// T - 1 = 7): steps 0..6 before the loop, X[min(t + 7, 7)] at the top of
// step t, the loaded steps carried in iter_args after the membrane.
// CHECK: module attributes {gpu.container_module}
// CHECK: gpu.module @snn_kernels
// CHECK-LABEL: gpu.func @snn_net_0_lif_fwd_h(
// CHECK-SAME: %[[X:.*]]: memref<1024xf32> {llvm.noalias}, %[[S:.*]]: memref<1024xf32> {llvm.noalias}, %[[H:.*]]: memref<1024xf32> {llvm.noalias})
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK: %[[BID:.*]] = gpu.block_id x
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: arith.cmpi ult, %{{.*}}, %c32
// CHECK-COUNT-7: vector.load %[[X]][%{{.*}}] {alignment = 16 : i64} : memref<1024xf32>, vector<4xf32>
// CHECK-NOT: vector.load
// CHECK: scf.for %[[T:.*]] = %c0 to %c8 step %c1 iter_args(%[[V:.*]] = %{{.*}}, {{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK: %[[AHEAD:.*]] = arith.addi %[[T]], %c7
// CHECK: arith.minui %[[AHEAD]], %c7
// CHECK: vector.load %[[X]][%{{.*}}] {alignment = 16 : i64} : memref<1024xf32>, vector<4xf32>
// CHECK-NOT: vector.load
// CHECK: arith.cmpf oge
// CHECK: vector.store %{{.*}}, %[[S]][%{{.*}}] {alignment = 16 : i64}
// CHECK: vector.store %{{.*}}, %[[H]][%{{.*}}] {alignment = 16 : i64}
// CHECK-NOT: scf.for
// CHECK: gpu.return
// Backward: reverse time (t = 7 - r), gs and h loaded, gx stored; a layer
// of few threads scans 4 steps per iteration (r .. r + 3), software
// pipelined: the first 4 steps' loads before the loop, then each iteration
// loads the next 4 steps (r + 4, clamped to the last block, 4) before its
// first store (ptxas does not move a load above a store) and computes the
// steps the previous one loaded, carried in iter_args.
// CHECK-LABEL: gpu.func @snn_net_0_lif_bwd(
// CHECK-SAME: %[[GS:.*]]: memref<1024xf32> {llvm.noalias}, %[[HB:.*]]: memref<1024xf32> {llvm.noalias}, %[[GX:.*]]: memref<1024xf32> {llvm.noalias})
// CHECK-COUNT-8: vector.load
// CHECK-NOT: vector.store
// CHECK: scf.for %[[R:.*]] = %c0 to %c8 step %c4 iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK: %[[NEXT:.*]] = arith.addi %[[R]], %c4
// CHECK: %[[FIRST:.*]] = arith.minui %[[NEXT]], %c4
// CHECK: arith.subi %c7, %[[FIRST]]
// CHECK-DAG: vector.load %[[GS]]
// CHECK-DAG: vector.load %[[HB]]
// CHECK-NOT: vector.store
// CHECK-COUNT-6: vector.load
// CHECK-NOT: vector.load
// CHECK: arith.subi %c7, %[[R]]
// CHECK-NOT: vector.load
// CHECK-COUNT-4: vector.store %{{.*}}, %[[GX]]
// CHECK-NEXT: scf.yield
// The atan surrogate needs no transcendental function.
// CHECK-NOT: math.
// CHECK: gpu.return

// INFER-LABEL: gpu.func @snn_net_0_lif_fwd(
// INFER-SAME: memref<1024xf32> {llvm.noalias}, %{{.*}}: memref<1024xf32> {llvm.noalias})
// INFER-NOT: gpu.func
// INFER: }
func.func @net(%x: tensor<8x2x64xf32>) -> tensor<8x2x64xf32> {
  %s = snn.lif %x {k = 0.25, c = 0.5, v_th = 1.0,
                   surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<8x2x64xf32>
  return %s : tensor<8x2x64xf32>
}

// -----

// Per-neuron parameters are arguments after the tensors, in the order k, c,
// v_leak, v_th, v_reset, v_init, then k_syn, c_syn, i_init; they are loaded
// once, before the loop, at neuron % F. N = 2*3 = 6 is not a multiple of 4:
// a thread per neuron with scalar-width accesses.
// CHECK-LABEL: gpu.func @snn_layers_0_cuba_lif_fwd_h(
// CHECK-SAME: %[[X:[^:]*]]: memref<30xf32> {llvm.noalias}, %[[S:[^:]*]]: memref<30xf32> {llvm.noalias}, %[[H:[^:]*]]: memref<30xf32> {llvm.noalias}, %[[I:[^:]*]]: memref<30xf32> {llvm.noalias}, %[[K:[^:]*]]: memref<3xf32> {llvm.noalias}, %[[VTH:[^:]*]]: memref<3xf32> {llvm.noalias}, %[[CSYN:[^:]*]]: memref<3xf32> {llvm.noalias})
// CHECK: %[[F:.*]] = arith.remui %{{.*}}, %c3
// CHECK-DAG: vector.load %[[K]][%[[F]]] {alignment = 4 : i64} : memref<3xf32>, vector<1xf32>
// CHECK-DAG: vector.load %[[VTH]][%[[F]]]
// CHECK-DAG: vector.load %[[CSYN]][%[[F]]]
// CHECK: scf.for
// CHECK: vector.load %[[X]]{{.*}}vector<1xf32>
// CHECK: vector.store %{{.*}}, %[[I]]
// CHECK: vector.store %{{.*}}, %[[S]]
// CHECK: vector.store %{{.*}}, %[[H]]
// CHECK-LABEL: gpu.func @snn_layers_0_cuba_lif_bwd(
// CHECK-SAME: memref<30xf32> {llvm.noalias}, %{{.*}}: memref<30xf32> {llvm.noalias}, %{{.*}}: memref<30xf32> {llvm.noalias}, %{{.*}}: memref<30xf32> {llvm.noalias}, %{{.*}}: memref<3xf32> {llvm.noalias}, %{{.*}}: memref<3xf32> {llvm.noalias}, %{{.*}}: memref<3xf32> {llvm.noalias})
// The sigmoid surrogate's exp is expanded to polynomial arithmetic, the
// same on the GPU and on the host.
// CHECK-NOT: math.exp
// CHECK: gpu.return
// snn.plif (index 1) learns its leak: k = sigmoid(w) from its weight (the
// first parameter argument); the backward adds dL/dw into gw with atomics.
// CHECK-LABEL: gpu.func @snn_layers_1_plif_fwd_h(
// CHECK-SAME: memref<30xf32> {llvm.noalias}, %{{.*}}: memref<30xf32> {llvm.noalias}, %{{.*}}: memref<30xf32> {llvm.noalias}, %[[PW:.*]]: memref<1xf32> {llvm.noalias})
// CHECK: memref.load %[[PW]]
// CHECK-LABEL: gpu.func @snn_layers_1_plif_bwd(
// CHECK-SAME: memref<30xf32> {llvm.noalias}, %{{.*}}: memref<30xf32> {llvm.noalias}, %{{.*}}: memref<30xf32> {llvm.noalias}, %[[GW:.*]]: memref<1xf32> {llvm.noalias}, %{{.*}}: memref<1xf32> {llvm.noalias})
// CHECK: memref.atomic_rmw addf %{{.*}}, %[[GW]]
// The f64 layer (index 2) is left to the runtime; the readout keeps its
// index 3.
// CHECK-NOT: snn_layers_2
// CHECK-LABEL: gpu.func @snn_layers_3_li_fwd_h(
// CHECK-LABEL: gpu.func @snn_layers_3_li_bwd(
// CHECK-NOT: gpu.func
func.func @layers(%x: tensor<5x2x3xf32>, %w: tensor<1xf32>, %d: tensor<5x2x3xf64>)
    -> (tensor<5x2x3xf32>, tensor<5x2x3xf32>, tensor<5x2x3xf64>, tensor<5x2x3xf32>) {
  %a = snn.cuba_lif %x {k = dense<[0.1, 0.2, 0.3]> : tensor<3xf32>,
                        v_th = dense<[1.0, 0.9, 0.8]> : tensor<3xf32>,
                        c_syn = dense<[1.0, 0.5, 2.0]> : tensor<3xf32>} : tensor<5x2x3xf32>
  %b = snn.plif %x, %w : tensor<5x2x3xf32>, tensor<1xf32>
  %c = snn.lif %d : tensor<5x2x3xf64>
  %e = snn.li %x {k = 0.1} : tensor<5x2x3xf32>
  return %a, %b, %c, %e : tensor<5x2x3xf32>, tensor<5x2x3xf32>, tensor<5x2x3xf64>, tensor<5x2x3xf32>
}

// -----

// Per-neuron parameters with F = 3 and N = 12: four lanes may span two
// samples, so they are gathered one by one.
// CHECK-LABEL: gpu.func @snn_wrap_0_if_fwd_h(
// CHECK-COUNT-4: memref.load %{{.*}} : memref<3xf32>
// CHECK: vector.from_elements
// CHECK: scf.for
func.func @wrap(%x: tensor<4x4x3xf32>) -> tensor<4x4x3xf32> {
  %s = snn.if %x {v_reset = dense<[0.0, -0.1, 0.1]> : tensor<3xf32>} : tensor<4x4x3xf32>
  return %s : tensor<4x4x3xf32>
}

// -----

// A step op (inside a time loop) runs one step from the given state, named
// apart from the scans: x, v in; s, v' and h out; no time loop. Its
// backward: gS, gV', H in; gX, gV out.
// CHECK-LABEL: gpu.func @snn_step_0_lif_step_fwd_h(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<8xf32> {llvm.noalias}, %[[V:[a-z0-9]+]]: memref<8xf32> {llvm.noalias}, %[[S:[a-z0-9]+]]: memref<8xf32> {llvm.noalias}, %[[VN:[a-z0-9]+]]: memref<8xf32> {llvm.noalias}, %[[H:[a-z0-9]+]]: memref<8xf32> {llvm.noalias})
// CHECK-NOT: scf.for
// CHECK: vector.load %[[V]]
// CHECK: vector.load %[[X]]
// CHECK: vector.store %{{.*}}, %[[S]]
// CHECK: vector.store %{{.*}}, %[[H]]
// CHECK: vector.store %{{.*}}, %[[VN]]
// CHECK-LABEL: gpu.func @snn_step_0_lif_step_bwd(
// CHECK-SAME: memref<8xf32> {llvm.noalias}, %{{.*}}: memref<8xf32> {llvm.noalias}, %{{.*}}: memref<8xf32> {llvm.noalias}, %[[GX:[a-z0-9]+]]: memref<8xf32> {llvm.noalias}, %[[GV:[a-z0-9]+]]: memref<8xf32> {llvm.noalias})
// CHECK: vector.store %{{.*}}, %[[GV]]
// CHECK: vector.store %{{.*}}, %[[GX]]
// INFER-LABEL: gpu.func @snn_step_0_lif_step_fwd(
// INFER-SAME: memref<8xf32> {llvm.noalias}, %{{.*}}: memref<8xf32> {llvm.noalias}, %{{.*}}: memref<8xf32> {llvm.noalias}, %{{.*}}: memref<8xf32> {llvm.noalias})
// INFER-NOT: gpu.func
func.func @step(%x: tensor<2x4xf32>, %v: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %s, %vn = snn.lif_step %x, %v : tensor<2x4xf32>
  return %s, %vn : tensor<2x4xf32>, tensor<2x4xf32>
}
