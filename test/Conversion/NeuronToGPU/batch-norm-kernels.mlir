// The batch norm kernels --snn-compile generates with batch-norm-kernels=true
// (docs/artifact-format.md, "Generated op kernels"): training forward and
// gradient a block of 1024 threads per channel (f64 partial sums per
// thread, 4 elements per loop iteration, a tree in shared memory), eval a
// thread per element.
// RUN: snn-opt %s --snn-op-kernels | FileCheck %s
// RUN: snn-opt %s --snn-op-kernels=host=true | FileCheck %s --check-prefix=HOST
// RUN: snn-opt %s --snn-op-kernels --nvvm-attach-target="chip=sm_90" --convert-scf-to-cf --convert-gpu-to-nvvm="use-bare-ptr-memref-call-conv=1" --reconcile-unrealized-casts | FileCheck %s --check-prefix=NVVM

func.func @bn(%x: tensor<2x3x5xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>,
              %rm: tensor<3xf32>, %rv: tensor<3xf32>, %gy: tensor<2x3x5xf32>,
              %e: tensor<4x6xf32>, %g6: tensor<6xf32>)
    -> (tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>,
        tensor<4x6xf32>) {
  // Its gradient is taken: training mode.
  %y = snn.batch_norm %x, %g, %b, %rm, %rv {spatial_rank = 1 : i64} : tensor<2x3x5xf32>, tensor<3xf32>
  %gx, %gg, %gb = snn.batch_norm_bwd %gy, %x, %g, %y : tensor<2x3x5xf32>, tensor<3xf32>
  // No gradient: eval mode, after a linear layer (S = 1).
  %z = snn.batch_norm %e, %g6, %g6, %g6, %g6 {spatial_rank = 0 : i64, eps = 1.0e-3 : f64} : tensor<4x6xf32>, tensor<6xf32>
  return %y, %gx, %gg, %gb, %z : tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4x6xf32>
}

// Training forward, x [M=2, C=3, S=5]: block b is channel b. Each thread
// sums its elements j = thread, thread + 1024, ... of the channel's M*S = 10
// (x[j / 5, b, j % 5]) shifted by the channel's first element, in f64; 4 of
// them per iteration, those past the end read the channel's first element
// and count 0.
// CHECK-LABEL: gpu.func @snn_op0_batch_norm(
// CHECK-SAME: %[[X:[^:]*]]: memref<30xf32>, %{{.*}}: memref<3xf32>, %{{.*}}: memref<3xf32>, %[[RM:[^:]*]]: memref<3xf32>, %[[RV:[^:]*]]: memref<3xf32>, %[[Y:[^:]*]]: memref<30xf32>, %[[SM:[^:]*]]: memref<3xf32>, %[[SI:[^:]*]]: memref<3xf32>)
// CHECK-SAME: workgroup(%[[SCRATCH:.*]] : memref<2048xf64, #gpu.address_space<workgroup>>) kernel
// CHECK-SAME: known_block_size = array<i32: 1024, 1, 1>
// CHECK: %[[C:.*]] = gpu.block_id x
// CHECK: %[[T:.*]] = gpu.thread_id x
// CHECK: %[[K32:.*]] = memref.load %[[X]]
// CHECK: %[[K:.*]] = arith.extf %[[K32]] : f32 to f64
// CHECK: %[[SUMS:.*]]:2 = scf.for %[[BASE:.*]] = %c0 to %c10 step %c4096 iter_args
// CHECK: %[[J0:.*]] = arith.addi %[[BASE]], %c0
// CHECK: %[[J:.*]] = arith.addi %[[J0]], %[[T]]
// CHECK: %[[VALID:.*]] = arith.cmpi ult, %[[J]], %c10
// CHECK: %[[JC:.*]] = arith.select %[[VALID]], %[[J]], %c0
// CHECK: arith.divui %[[JC]], %c5
// CHECK: %[[V:.*]] = arith.extf
// CHECK: %[[D:.*]] = arith.subf %[[V]], %[[K]] : f64
// CHECK: %[[DM:.*]] = arith.select %[[VALID]], %[[D]], %{{.*}} : f64
// CHECK: arith.mulf %[[DM]], %[[DM]] : f64
// CHECK-COUNT-3: arith.addi %[[BASE]], %c{{1024|2048|3072}}
// The block's tree: 10 levels, a barrier after each.
// CHECK: memref.store %[[SUMS]]#0, %[[SCRATCH]][%[[T]]]
// CHECK: gpu.barrier
// CHECK: arith.cmpi ult, %[[T]], %c512
// CHECK-COUNT-10: gpu.barrier
// CHECK: %[[TOTAL:.*]] = memref.load %[[SCRATCH]][%c0
// Mean = K + sum / n; the biased variance normalizes, the unbiased one
// (x 10/9) enters the running variance, written by thread 0 with the saved
// statistics.
// CHECK: %[[OFFSET:.*]] = arith.divf %[[TOTAL]], %{{.*}} : f64
// CHECK: arith.addf %[[K]], %[[OFFSET]] : f64
// CHECK: arith.maximumf
// CHECK: math.sqrt %{{.*}} : f64
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[T]], %c0
// CHECK: scf.if %[[FIRST]] {
// CHECK: arith.constant 1.1111111111111112 : f64
// CHECK: memref.store %{{.*}}, %[[RM]][%[[C]]]
// CHECK: memref.store %{{.*}}, %[[RV]][%[[C]]]
// CHECK: memref.store %{{.*}}, %[[SM]][%[[C]]]
// CHECK: memref.store %{{.*}}, %[[SI]][%[[C]]]
// CHECK: }
// Then y = x * scale + shift in f32 over the same elements, stored where
// valid.
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c10{{.*}} step %c4096{{.*}} {
// CHECK: %[[XV:.*]] = memref.load %[[X]]
// CHECK: %[[SCALED:.*]] = arith.mulf %[[XV]], %{{.*}} : f32
// CHECK: %[[YV:.*]] = arith.addf %[[SCALED]], %{{.*}} : f32
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: memref.store %[[YV]], %[[Y]]
// CHECK: gpu.return

// Gradient: the block sums gy and gy * xhat (xhat from the saved mean and
// invstd), thread 0 writes ggamma and gbeta, then every thread its gx.
// CHECK-LABEL: gpu.func @snn_op1_batch_norm_bwd(
// CHECK-SAME: %[[GY:[^:]*]]: memref<30xf32>, %[[BX:[^:]*]]: memref<30xf32>, %{{.*}}: memref<3xf32>, %[[MEAN:[^:]*]]: memref<3xf32>, %[[INV:[^:]*]]: memref<3xf32>, %[[GX:[^:]*]]: memref<30xf32>, %[[GG:[^:]*]]: memref<3xf32>, %[[GB:[^:]*]]: memref<3xf32>)
// CHECK: memref.load %[[MEAN]]
// CHECK: memref.load %[[INV]]
// CHECK: scf.for
// CHECK: %[[XHAT:.*]] = arith.mulf
// CHECK: arith.mulf %{{.*}}, %[[XHAT]] : f64
// CHECK-COUNT-11: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[GG]]
// CHECK: memref.store %{{.*}}, %[[GB]]
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[GX]]
// CHECK: gpu.return

// Eval, x [M=4, C=6] (S = 1): a thread per element, channel i % 6, the
// running statistics' affine in f32.
// CHECK-LABEL: gpu.func @snn_op2_batch_norm_eval(
// CHECK-SAME: memref<24xf32>, %{{.*}}: memref<6xf32>, %{{.*}}: memref<6xf32>, %{{.*}}: memref<6xf32>, %{{.*}}: memref<6xf32>, %{{.*}}: memref<24xf32>) kernel
// CHECK-NOT: workgroup
// CHECK: %[[CH:.*]] = arith.remui %{{.*}}, %c6
// CHECK: %[[VAR:.*]] = memref.load %{{.*}}[%[[CH]]]
// CHECK: arith.constant 1.000000e-03 : f32
// CHECK: math.sqrt %{{.*}} : f32

// The host functions: a loop over a range of the channels, one thread's
// code each (no shared memory, no barrier).
// HOST-LABEL: func.func @snn_op0_batch_norm(
// HOST-SAME: snn.host_grain = 1 : i64, snn.host_items = 3 : i64
// HOST-NOT: gpu.
// HOST: scf.for %[[CH:.*]] = %{{.*}} to %{{.*}} step %c1 {
// HOST: scf.for %{{.*}} = %c0{{.*}} to %c10 step %c1{{.*}} iter_args
// HOST-NOT: gpu.barrier
// HOST-NOT: arith.select
// HOST: memref.store %{{.*}}, %{{.*}}[%[[CH]]] : memref<3xf32>
// HOST-LABEL: func.func @snn_op1_batch_norm_bwd(
// Eval on the host: the channel's affine once (one square root per
// channel), then the channel's elements x[m, c] = x[6 m + c].
// HOST-LABEL: func.func @snn_op2_batch_norm_eval(
// HOST: scf.for %[[EC:.*]] = %{{.*}} to %{{.*}} step %c1 {
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
// between the tree's levels.
// NVVM: llvm.mlir.global internal @__wg_snn_op0_batch_norm_0() {addr_space = 3 : i32} : !llvm.array<2048 x f64>
// NVVM-LABEL: llvm.func @snn_op0_batch_norm(
// NVVM: nvvm.barrier0
