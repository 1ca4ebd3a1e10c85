// The kernels --snn-compile generates for the elementwise ops and the
// optimizer updates (docs/artifact-format.md, "Generated op kernels").
// RUN: snn-opt %s --snn-op-kernels | FileCheck %s
// RUN: snn-opt %s --snn-op-kernels=host=true | FileCheck %s --check-prefix=HOST
// RUN: snn-opt %s --snn-op-kernels --nvvm-attach-target="chip=sm_90" --convert-scf-to-cf --convert-gpu-to-nvvm="use-bare-ptr-memref-call-conv=1" --reconcile-unrealized-casts | FileCheck %s --check-prefix=NVVM

// One thread per element; the last block is guarded (600 = 2 blocks + 88).
// CHECK-LABEL: gpu.func @snn_op0_add(
// CHECK-SAME: %[[A:.*]]: memref<600xf32>, %[[B:.*]]: memref<600xf32>, %[[Y:.*]]: memref<600xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK: %[[BLOCK:.*]] = gpu.block_id x
// CHECK: %[[LANE:.*]] = gpu.thread_id x
// CHECK: %[[I:.*]] = arith.addi %{{.*}}, %[[LANE]] : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[I]], %c600
// CHECK: scf.if %[[IN]]
// CHECK-NEXT: %[[VA:.*]] = memref.load %[[A]][%[[I]]]
// CHECK-NEXT: %[[VB:.*]] = memref.load %[[B]][%[[I]]]
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[VA]], %[[VB]] : f32
// CHECK-NEXT: memref.store %[[SUM]], %[[Y]][%[[I]]]

// Equal scales share one kernel; 512 elements need no guard.
// CHECK-LABEL: gpu.func @snn_op1_scale(
// CHECK-SAME: memref<512xf32>, %{{.*}}: memref<512xf32>)
// CHECK-NOT: scf.if
// CHECK: arith.constant 5.000000e-01 : f32
// CHECK: arith.mulf
// CHECK: gpu.return
// CHECK-NOT: gpu.func @snn_op{{[0-9]+}}_scale(%{{.*}}: memref<512xf32>

// The two SGD updates with the same hyperparameters: one kernel over both
// parameters (segment 0: blocks [0, 1), segment 1: [1, 3)), reading the run
// values (learning rate bits, step) from the last argument.
// CHECK-LABEL: gpu.func @snn_op2_sgd(
// CHECK-SAME: %[[P0:[^:]*]]: memref<10xf32>, %[[G0:[^:]*]]: memref<10xf32>, %[[M0:[^:]*]]: memref<10xf32>, %[[P1:[^:]*]]: memref<300xf32>, %[[G1:[^:]*]]: memref<300xf32>, %[[M1:[^:]*]]: memref<300xf32>, %[[RV:[^:]*]]: memref<4xi32>)
// CHECK: %[[W0:.*]] = memref.load %[[RV]][%c0]
// CHECK: %[[LR:.*]] = arith.bitcast %[[W0]] : i32 to f32
// CHECK: %[[W1:.*]] = memref.load %[[RV]][%c1]
// CHECK: %[[STEP:.*]] = arith.extui %[[W1]] : i32 to i64
// CHECK: %[[FIRST:.*]] = arith.cmpi ule, %[[STEP]]
// CHECK: %[[SEG0:.*]] = arith.cmpi ult, %{{.*}}, %c1
// CHECK: scf.if %[[SEG0]]
// CHECK: memref.load %[[G0]]
// CHECK: arith.select %[[FIRST]]
// CHECK: memref.store %{{.*}}, %[[M0]]
// CHECK: memref.store %{{.*}}, %[[P0]]
// CHECK: } else {
// CHECK: memref.load %[[G1]]
// CHECK: memref.store %{{.*}}, %[[P1]]

// Adam: the bias corrections 1 - beta^step in f64 (by squaring), rounded to
// f32 once; AdamW's decay factor likewise.
// CHECK-LABEL: gpu.func @snn_op3_adam(
// CHECK-SAME: memref<300xf32>, %{{.*}}: memref<300xf32>, %{{.*}}: memref<300xf32>, %{{.*}}: memref<300xf32>, %{{.*}}: memref<4xi32>)
// CHECK: scf.while
// CHECK: arith.mulf %{{.*}} : f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: math.sqrt
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: math.sqrt %{{.*}} : f32
// CHECK: arith.divf

// A different weight decay is another kernel.
// CHECK-LABEL: gpu.func @snn_op4_sgd(
// CHECK-SAME: memref<300xf32>, %{{.*}}: memref<300xf32>, %{{.*}}: memref<4xi32>)

// The host functions take a range [begin, end) of their work items (here
// the elements, segment after segment) and say how many there are.
// HOST-LABEL: func.func @snn_op0_add(
// HOST-SAME: %[[BEGIN:[^:]*]]: index, %[[END:[^:]*]]: index)
// HOST-SAME: snn.host_grain = 16384 : i64, snn.host_items = 600 : i64
// HOST: %[[LO:.*]] = arith.maxsi %[[BEGIN]], %c0
// HOST: %[[FIRST:.*]] = arith.minsi %[[LO]], %c600
// HOST: %[[HI:.*]] = arith.maxsi %[[END]], %c0
// HOST: %[[LAST:.*]] = arith.minsi %[[HI]], %c600
// HOST: scf.for %{{.*}} = %[[FIRST]] to %[[LAST]] step %c1
// HOST: arith.addf
// The second segment's items are 10..309: the range shifted by 10.
// HOST-LABEL: func.func @snn_op2_sgd(
// HOST-SAME: %[[SB:[^:]*]]: index, %[[SE:[^:]*]]: index)
// HOST-SAME: snn.host_items = 310 : i64
// HOST: arith.minsi %{{.*}}, %c10
// HOST: scf.for
// HOST: arith.subi %[[SB]], %c10
// HOST: arith.minsi %{{.*}}, %c300
// HOST: arith.subi %[[SE]], %c10
// HOST: scf.for

// NVVM-LABEL: llvm.func @snn_op0_add(
// NVVM-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes {gpu.kernel
// NVVM-LABEL: llvm.func @snn_op2_sgd(
// NVVM-SAME: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes {gpu.kernel

func.func @elementwise(%a: tensor<2x300xf32>, %b: tensor<2x300xf32>,
                       %c: tensor<512xf32>) -> (tensor<2x300xf32>, tensor<512xf32>, tensor<512xf32>) {
  %s = snn.add %a, %b : tensor<2x300xf32>
  %t = snn.scale %c {scale = 0.5} : tensor<512xf32>
  %u = snn.scale %c {scale = 0.5} : tensor<512xf32>
  return %s, %t, %u : tensor<2x300xf32>, tensor<512xf32>, tensor<512xf32>
}

func.func @update(%p0: tensor<10xf32>, %g0: tensor<10xf32>, %m0: tensor<10xf32>,
                  %p1: tensor<300xf32>, %g1: tensor<300xf32>, %m1: tensor<300xf32>,
                  %v1: tensor<300xf32>) {
  %a, %am = snn.sgd %p0, %g0, %m0 {lr = 0.1, momentum = 0.9} : tensor<10xf32>, tensor<10xf32>
  %b, %bm = snn.sgd %p1, %g1, %m1 {lr = 0.1, momentum = 0.9} : tensor<300xf32>, tensor<300xf32>
  %c:3 = snn.adam %p1, %g1, %m1, %v1 {lr = 0.001, decoupled = true, weight_decay = 0.01} : tensor<300xf32>
  %d = snn.sgd %p1, %g1 {lr = 0.1, weight_decay = 0.001} : tensor<300xf32>
  return
}

// Dropout: the mask is u8 (i8 on the GPU, a 0/1 float slot in the CPU
// runtime's storage); the random stream is (seed * 0x100000001B3 + the op's
// index), the seed in words 2 and 3 of the run values.
// RUN: snn-opt %S/Inputs/dropout-kernels.mlir --snn-op-kernels | FileCheck %s --check-prefix=DROP
// RUN: snn-opt %S/Inputs/dropout-kernels.mlir --snn-op-kernels=host=true | FileCheck %s --check-prefix=DROPHOST
// DROP-LABEL: gpu.func @snn_op0_dropout(
// DROP-SAME: memref<24xf32>, %{{.*}}: memref<24xf32>, %[[MASK:.*]]: memref<24xi8>, %[[RV:.*]]: memref<4xi32>)
// DROP: memref.load %[[RV]][%c2]
// DROP: memref.load %[[RV]][%c3]
// DROP: arith.constant 1099511628211 : i64
// DROP: arith.cmpf olt
// DROP: arith.extui %{{.*}} : i1 to i8
// DROP: memref.store %{{.*}}, %[[MASK]]
// DROP-LABEL: gpu.func @snn_op1_dropout_bwd(
// DROP-SAME: memref<24xf32>, %{{.*}}: memref<24xi8>, %{{.*}}: memref<24xf32>)
// DROPHOST-LABEL: func.func @snn_op0_dropout(
// DROPHOST-SAME: memref<24xf32>, %{{.*}}: memref<24xf32>, %{{.*}}: memref<24xf32>, %{{.*}}: memref<4xi32>, %{{.*}}: index, %{{.*}}: index)
// DROPHOST: arith.uitofp %{{.*}} : i1 to f32
