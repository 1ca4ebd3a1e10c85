// The batch norm kernels --snn-compile generates (docs/artifact-format.md,
// "Generated op kernels"): training forward and gradient three kernels each
// (statistics a block per channel and part of the rows, f64 sums, a tree in
// shared memory, f32 high/low pairs in the scratch; finish a thread per
// channel; apply a thread per 4 elements with 16-byte accesses), eval the
// apply kernel alone (scalar here: S = 1).
// RUN: snn-opt %s --snn-op-kernels | FileCheck %s
// RUN: snn-opt %s --snn-op-kernels=host=true | FileCheck %s --check-prefix=HOST
// RUN: snn-opt %s --snn-op-kernels --nvvm-attach-target="chip=sm_90" --convert-scf-to-cf --convert-gpu-to-nvvm="use-bare-ptr-memref-call-conv=1" --reconcile-unrealized-casts | FileCheck %s --check-prefix=NVVM

func.func @bn(%x: tensor<2x3x4xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>,
              %rm: tensor<3xf32>, %rv: tensor<3xf32>, %gy: tensor<2x3x4xf32>,
              %e: tensor<4x6xf32>, %g6: tensor<6xf32>)
    -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>,
        tensor<4x6xf32>) {
  // Its gradient is taken: training mode.
  %y = snn.batch_norm %x, %g, %b, %rm, %rv {spatial_rank = 1 : i64} : tensor<2x3x4xf32>, tensor<3xf32>
  %gx, %gg, %gb = snn.batch_norm_bwd %gy, %x, %g, %y : tensor<2x3x4xf32>, tensor<3xf32>
  // No gradient: eval mode, after a linear layer (S = 1).
  %z = snn.batch_norm %e, %g6, %g6, %g6, %g6 {spatial_rank = 0 : i64, eps = 1.0e-3 : f64} : tensor<4x6xf32>, tensor<6xf32>
  return %y, %gx, %gg, %gb, %z : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4x6xf32>
}

// Statistics, x [M=2, C=3, S=4], one part per channel: block b is channel
// b (b / 1), part b % 1. The scratch holds 4 floats per block (12), then 3
// per channel (9).
// CHECK-LABEL: gpu.func @snn_op0_batch_norm_stats(
// CHECK-SAME: %[[X:[^:]*]]: memref<24xf32>, %[[S:[^:]*]]: memref<21xf32>)
// CHECK-SAME: workgroup(%[[SHARED:.*]] : memref<512xf64, #gpu.address_space<workgroup>>) kernel
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: %[[B:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[T:.*]] = arith.index_castui %{{.*}} : index to i32
// The shift K: the channel's first element, in f64.
// CHECK: %[[K32:.*]] = memref.load %[[X]]
// CHECK: %[[K:.*]] = arith.extf %[[K32]] : f32 to f64
// Each thread sums 4 elements per 16-byte load, from its thread index up in
// steps of 256.
// CHECK: %[[SUMS:.*]]:2 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c256 iter_args
// CHECK: vector.load %[[X]][%{{.*}}] {alignment = 16 : i64} : memref<24xf32>, vector<4xf32>
// CHECK-COUNT-4: arith.subf %{{.*}}, %[[K]] : f64
// The block's tree: 8 levels, a barrier after each.
// CHECK: memref.store %[[SUMS]]#0, %[[SHARED]]
// CHECK: gpu.barrier
// CHECK: arith.cmpi ult, %{{.*}}, %c128 : index
// CHECK-COUNT-8: gpu.barrier
// Thread 0 writes each sum as an f32 (high, low) pair: scratch[4 b ...].
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[T]], %c0
// CHECK: scf.if %[[FIRST]] {
// CHECK: arith.muli %[[B]], %c4_i32
// CHECK: %[[HIGH:.*]] = arith.truncf %[[TOTAL:.*]] : f64 to f32
// CHECK: %[[BACK:.*]] = arith.extf %[[HIGH]] : f32 to f64
// CHECK: %[[REST:.*]] = arith.subf %[[TOTAL]], %[[BACK]] : f64
// CHECK: arith.truncf %[[REST]] : f64 to f32
// CHECK-COUNT-4: memref.store %{{.*}}, %[[S]]
// CHECK: gpu.return

// Finish, a thread per channel: the parts' pairs added in f64 in order;
// mean = K + sum / n; the biased variance normalizes, the unbiased one
// (x 8/7) enters the running variance; the saved statistics; then scale and
// shift for the apply kernel at scratch[12 + c] and [15 + c].
// CHECK-LABEL: gpu.func @snn_op1_batch_norm_finish(
// CHECK-SAME: %{{.*}}: memref<24xf32>, %{{.*}}: memref<3xf32>, %{{.*}}: memref<3xf32>, %[[RM:[^:]*]]: memref<3xf32>, %[[RV:[^:]*]]: memref<3xf32>, %[[SM:[^:]*]]: memref<3xf32>, %[[SI:[^:]*]]: memref<3xf32>, %[[FS:[^:]*]]: memref<21xf32>) kernel
// CHECK-NOT: workgroup
// CHECK: %[[C:.*]] = arith.addi
// CHECK: arith.cmpi ult, %[[C]], %c3_i32
// CHECK: scf.for %{{.*}} step %c4 iter_args
// CHECK: arith.maximumf
// CHECK: math.sqrt %{{.*}} : f64
// CHECK: arith.constant 1.1428571428571428 : f64
// CHECK: memref.store %{{.*}}, %[[RM]]
// CHECK: memref.store %{{.*}}, %[[RV]]
// CHECK: memref.store %{{.*}}, %[[SM]]
// CHECK: memref.store %{{.*}}, %[[SI]]
// CHECK: arith.addi %c12_i32, %[[C]]
// CHECK: memref.store %{{.*}}, %[[FS]]
// CHECK: arith.addi %c15_i32, %[[C]]
// CHECK: memref.store %{{.*}}, %[[FS]]
// CHECK: gpu.return

// Apply, a thread per 4 elements (6 threads): channel (4 i / 4) % 3, y =
// x scale + shift in f32, one 16-byte load and store.
// CHECK-LABEL: gpu.func @snn_op2_batch_norm_apply(
// CHECK-SAME: %[[AX:[^:]*]]: memref<24xf32>, %[[AS:[^:]*]]: memref<21xf32>, %[[AY:[^:]*]]: memref<24xf32>) kernel
// CHECK: arith.cmpi ult, %{{.*}}, %c6_i32
// CHECK: %[[E:.*]] = arith.muli %{{.*}}, %c4_i32
// CHECK: %[[ROW:.*]] = arith.divui %[[E]], %c4_i32
// CHECK: %[[CH:.*]] = arith.remui %[[ROW]], %c3_i32
// CHECK: %[[SCALE:.*]] = memref.load %[[AS]]
// CHECK: %[[SHIFT:.*]] = memref.load %[[AS]]
// CHECK: %[[XV:.*]] = vector.load %[[AX]][%{{.*}}] {alignment = 16 : i64} : memref<24xf32>, vector<4xf32>
// CHECK: %[[X0:.*]] = vector.extract %[[XV]][0]
// CHECK: %[[M0:.*]] = arith.mulf %[[X0]], %[[SCALE]] : f32
// CHECK: arith.addf %[[M0]], %[[SHIFT]] : f32
// CHECK: %[[YV:.*]] = vector.from_elements
// CHECK: vector.store %[[YV]], %[[AY]][%{{.*}}] {alignment = 16 : i64}
// CHECK: gpu.return

// Gradient: the statistics kernel sums gy and gy xhat (xhat from the saved
// mean and invstd), finish writes ggamma, gbeta and the terms A, B, D of gx
// = A gy + B xhat + D, the apply kernel gx in f64, rounded once.
// CHECK-LABEL: gpu.func @snn_op3_batch_norm_bwd_stats(
// CHECK-SAME: %[[GY:[^:]*]]: memref<24xf32>, %[[BX:[^:]*]]: memref<24xf32>, %[[MEAN:[^:]*]]: memref<3xf32>, %[[INV:[^:]*]]: memref<3xf32>, %{{.*}}: memref<21xf32>)
// CHECK: memref.load %[[MEAN]]
// CHECK: memref.load %[[INV]]
// CHECK: scf.for
// CHECK: vector.load %[[GY]]
// CHECK: vector.load %[[BX]]
// CHECK: %[[XHAT:.*]] = arith.mulf
// CHECK: arith.mulf %{{.*}}, %[[XHAT]] : f64
// CHECK-COUNT-9: gpu.barrier
// CHECK-LABEL: gpu.func @snn_op4_batch_norm_bwd_finish(
// CHECK-SAME: %{{.*}}: memref<3xf32>, %{{.*}}: memref<3xf32>, %{{.*}}: memref<21xf32>, %[[GG:[^:]*]]: memref<3xf32>, %[[GB:[^:]*]]: memref<3xf32>)
// CHECK: memref.store %{{.*}}, %[[GG]]
// CHECK: memref.store %{{.*}}, %[[GB]]
// CHECK-COUNT-2: arith.negf
// CHECK-LABEL: gpu.func @snn_op5_batch_norm_bwd_apply(
// CHECK-SAME: %[[GX:[^:]*]]: memref<24xf32>)
// CHECK: vector.load
// CHECK: vector.load
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: vector.store %{{.*}}, %[[GX]]
// CHECK: gpu.return

// Eval, x [M=4, C=6] (S = 1): a thread per element, channel i % 6, the
// running statistics' affine in f32, scalar accesses.
// CHECK-LABEL: gpu.func @snn_op6_batch_norm_eval(
// CHECK-SAME: memref<24xf32>, %{{.*}}: memref<6xf32>, %{{.*}}: memref<6xf32>, %{{.*}}: memref<6xf32>, %{{.*}}: memref<6xf32>, %{{.*}}: memref<24xf32>) kernel
// CHECK-NOT: workgroup
// CHECK: %[[ECH:.*]] = arith.remui %{{.*}}, %c6_i32
// CHECK: arith.constant 1.000000e-03 : f32
// CHECK: math.sqrt %{{.*}} : f32
// CHECK-NOT: vector.
// CHECK: gpu.return

// The host functions: ranged (docs/artifact-format.md, "CPU kernels and
// threads"), one element at a time. Statistics: a work item per block (3
// blocks of one thread, no shared memory, no barrier).
// HOST-LABEL: func.func @snn_op0_batch_norm_stats(
// HOST-SAME: snn.host_grain = 2048 : i64, snn.host_items = 3 : i64
// HOST-NOT: gpu.
// HOST: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1 {
// HOST: scf.for %{{.*}} step %c1{{.*}} iter_args
// HOST-NOT: gpu.barrier
// HOST-NOT: vector.
// HOST: return
// Finish: a work item per channel.
// HOST-LABEL: func.func @snn_op1_batch_norm_finish(
// HOST-SAME: snn.host_grain = 4096 : i64, snn.host_items = 3 : i64
// Apply: a work item per element.
// HOST-LABEL: func.func @snn_op2_batch_norm_apply(
// HOST-SAME: snn.host_grain = 16384 : i64, snn.host_items = 24 : i64
// HOST: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1 {
// HOST-NOT: vector.
// HOST: return
// Eval on the host: a work item per channel, the channel's affine once (one
// square root per channel), then its elements x[m, c] = x[6 m + c].
// HOST-LABEL: func.func @snn_op6_batch_norm_eval(
// HOST-SAME: snn.host_grain = 4096 : i64, snn.host_items = 6 : i64
// HOST: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1 {
// HOST: %[[ROOT:.*]] = math.sqrt %{{.*}} : f32
// HOST: %[[SCALE:.*]] = arith.divf %{{.*}}, %[[ROOT]] : f32
// HOST: scf.for %{{.*}} = %c0{{.*}} to %c4 step %c1
// HOST-NOT: math.sqrt
// HOST: %[[EX:.*]] = memref.load
// HOST: arith.mulf %[[EX]], %[[SCALE]] : f32
// HOST: memref.store
// HOST-NOT: math.sqrt
// HOST: return

// The NVVM lowering keeps the block's sums in static shared memory, a barrier
// between the tree's levels, and the 16-byte accesses.
// NVVM: llvm.mlir.global internal @__wg_snn_op0_batch_norm_stats_0() {addr_space = 3 : i32} : !llvm.array<512 x f64>
// NVVM-LABEL: llvm.func @snn_op0_batch_norm_stats(
// NVVM: nvvm.barrier0
// NVVM-LABEL: llvm.func @snn_op2_batch_norm_apply(
// NVVM: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// NVVM: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
