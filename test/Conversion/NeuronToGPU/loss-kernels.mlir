// The loss kernels --snn-compile generates (docs/artifact-format.md,
// "Generated op kernels"): for each loss op the training kernel (y, labels,
// loss, gy, correct) and the evaluation kernel (no gy); one block of 256
// threads, the block's sums added in a tree in shared memory (no atomics),
// exp and log without libdevice. Where the batch's m[s, c] fits in shared
// memory the block computes it, the exps and the gradient a thread per
// (s, c), the rest a thread per sample; else a thread per sample does all.
// RUN: snn-opt %s --snn-op-kernels | FileCheck %s
// RUN: snn-opt %s --snn-op-kernels=host=true | FileCheck %s --check-prefix=HOST
// RUN: snn-opt %s --snn-op-kernels --nvvm-attach-target="chip=sm_90" --convert-scf-to-cf --convert-gpu-to-nvvm="use-bare-ptr-memref-call-conv=1" --reconcile-unrealized-casts | FileCheck %s --check-prefix=NVVM

func.func @losses(%y: tensor<3x5x7xf32>, %l: tensor<5xi32>,
                  %m: tensor<4x1x5xf32>, %l1: tensor<1xi32>)
    -> (tensor<f32>, tensor<3x5x7xf32>, tensor<f32>, tensor<3x5x7xf32>,
        tensor<f32>, tensor<4x1x5xf32>) {
  %loss, %gy, %c = snn.loss_ce_rate %y, %l : tensor<3x5x7xf32>, tensor<5xi32> -> tensor<f32>
  // The same cross-entropy on a membrane: the same kernels.
  %lm, %gm, %cm = snn.loss_ce_membrane %y, %l : tensor<3x5x7xf32>, tensor<5xi32> -> tensor<f32>
  %lx, %gx, %cx = snn.loss_ce_membrane_max %m, %l1 : tensor<4x1x5xf32>, tensor<1xi32> -> tensor<f32>
  return %loss, %gy, %lm, %gm, %lx, %gx : tensor<f32>, tensor<3x5x7xf32>, tensor<f32>, tensor<3x5x7xf32>, tensor<f32>, tensor<4x1x5xf32>
}

func.func @large_batch(%y: tensor<2x1000x10xf32>, %l: tensor<1000xi32>)
    -> (tensor<f32>, tensor<2x1000x10xf32>) {
  %loss, %gy, %c = snn.loss_ce_rate %y, %l : tensor<2x1000x10xf32>, tensor<1000xi32> -> tensor<f32>
  return %loss, %gy : tensor<f32>, tensor<2x1000x10xf32>
}

// Staged: m[s, c] for the 35 pairs into shared memory (768 f64 of the
// block sum, then 35 + 3 x 5 per-sample values), a barrier; per sample
// (5 of them: threads 5-255 only join the sums) the labels checked against
// the 7 classes (a negative one is a large unsigned number), the maximum;
// the exps per pair; the loss per sample; the gradient per pair; then the
// block's three sums (loss, hits, samples), halved 8 times; thread 0
// writes the loss / B and the hits.
// CHECK-LABEL: gpu.func @snn_op0_loss_ce(
// CHECK-SAME: %[[Y:.*]]: memref<105xf32>, %[[L:.*]]: memref<5xi32>, %[[LOSS:.*]]: memref<1xf32>, %[[GY:.*]]: memref<105xf32>, %[[C:.*]]: memref<1xf32>)
// CHECK-SAME: workgroup(%[[S:.*]] : memref<818xf64, #gpu.address_space<workgroup>>) kernel
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: %[[T:.*]] = gpu.thread_id x
// CHECK: scf.for %{{.*}} = %[[T]] to %c35 step %c256
// CHECK: memref.load %[[Y]]
// CHECK: memref.store %{{.*}}, %[[S]]
// CHECK: gpu.barrier
// CHECK: scf.for %[[B:.*]] = %[[T]] to %c5 step %c256
// CHECK: %[[LABEL:.*]] = memref.load %[[L]][%[[B]]] : memref<5xi32>
// CHECK: arith.cmpi ult, %[[LABEL]], %c7_i32 : i32
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %[[T]] to %c35{{.*}} step %c256
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %[[T]] to %c5{{.*}} step %c256
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %[[T]] to %c35{{.*}} step %c256
// CHECK: memref.store %{{.*}}, %[[GY]]
// CHECK-NOT: atomic
// CHECK: memref.store %{{.*}}, %[[S]][%[[T]]]
// CHECK: gpu.barrier
// CHECK-COUNT-8: gpu.barrier
// CHECK-NOT: atomic
// CHECK: %[[MEAN:.*]] = arith.divf %{{.*}}, %cst{{.*}} : f64
// CHECK: %[[MEAN32:.*]] = arith.truncf %[[MEAN]] : f64 to f32
// CHECK: memref.store %[[MEAN32]], %[[LOSS]]
// CHECK: memref.store %{{.*}}, %[[C]]
// CHECK: gpu.return

// The evaluation kernel: no gy; a label of -1 is skipped.
// CHECK-LABEL: gpu.func @snn_op1_loss_ce_eval(
// CHECK-SAME: memref<105xf32>, %{{.*}}: memref<5xi32>, %{{.*}}: memref<1xf32>, %{{.*}}: memref<1xf32>)
// CHECK: arith.cmpi eq, %{{.*}}, %c-1_i32 : i32

// The maximum over time: batch 1, 4 steps; the gradient at the first step
// that reaches the maximum.
// CHECK-LABEL: gpu.func @snn_op2_loss_ce_max(
// CHECK-SAME: memref<20xf32>, %{{.*}}: memref<1xi32>, %{{.*}}: memref<1xf32>, %{{.*}}: memref<20xf32>, %{{.*}}: memref<1xf32>)
// CHECK: arith.cmpf oeq
// CHECK-LABEL: gpu.func @snn_op3_loss_ce_max_eval(
// CHECK-NOT: gpu.func

// 1000 x 10 values of m do not fit: a thread per sample does all, with
// the block sum's shared memory only.
// CHECK-LABEL: gpu.func @snn_op4_loss_ce(
// CHECK-SAME: workgroup(%[[S:.*]] : memref<768xf64, #gpu.address_space<workgroup>>) kernel
// CHECK: %[[T:.*]] = gpu.thread_id x
// CHECK: scf.for %[[B:.*]] = %[[T]] to %c1000 step %c256
// CHECK: memref.load %{{.*}}[%[[B]]] : memref<1000xi32>
// CHECK-NOT: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[S]][%[[T]]]
// CHECK-COUNT-9: gpu.barrier

// The host functions: the samples in order, no shared memory; the whole
// batch is one work item of the ranged CPU kernel.
// HOST-LABEL: func.func @snn_op0_loss_ce(
// HOST-SAME: memref<105xf32>, %{{.*}}: memref<5xi32>, %{{.*}}: memref<1xf32>, %{{.*}}: memref<105xf32>, %{{.*}}: memref<1xf32>, %{{.*}}: index, %{{.*}}: index)
// HOST-SAME: snn.host_items = 1
// HOST: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// HOST: scf.for %{{.*}} = %c0{{.*}} to %c5 step
// HOST-NOT: gpu.barrier
// HOST: return
// HOST-LABEL: func.func @snn_op1_loss_ce_eval(

// NVVM: llvm.func @snn_op0_loss_ce(
// NVVM-NOT: __nv_
// NVVM: nvvm.barrier0
