// The pooling kernels --snn-compile generates (docs/artifact-format.md,
// "Generated op kernels"): the window unrolled, 32-bit index arithmetic.
// RUN: snn-opt %s --snn-op-kernels | FileCheck %s
// RUN: snn-opt %s --snn-op-kernels=host=true | FileCheck %s --check-prefix=HOST
// RUN: snn-opt %s --snn-op-kernels --nvvm-attach-target="chip=sm_90" --convert-scf-to-cf --convert-gpu-to-nvvm="use-bare-ptr-memref-call-conv=1" --reconcile-unrealized-casts | FileCheck %s --check-prefix=NVVM

func.func @pools(%x: tensor<2x3x4x4xf32>, %z: tensor<1x2x5x5xf32>,
                 %g: tensor<1x2x3x3xf32>, %gt: tensor<2x3x2x2xf32>,
                 %g6: tensor<1x1x6x6xf32>, %z6: tensor<1x1x6x6xf32>)
    -> (tensor<2x3x2x2xf32>, tensor<1x2x3x3xf32>, tensor<1x2x5x5xf32>,
        tensor<2x3x4x4xf32>, tensor<1x2x5x5xf32>, tensor<2x3x2x2xf32>,
        tensor<1x1x6x6xf32>) {
  %a = snn.avg_pool2d %x {kernel_size = array<i64: 2, 2>} : tensor<2x3x4x4xf32> -> tensor<2x3x2x2xf32>
  %m = snn.max_pool2d %z {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<1x2x5x5xf32> -> tensor<1x2x3x3xf32>
  %gm = snn.max_pool2d_bwd %g, %z {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<1x2x3x3xf32> -> tensor<1x2x5x5xf32>
  %ga = snn.avg_pool2d_bwd %gt {kernel_size = array<i64: 2, 2>} : tensor<2x3x2x2xf32> -> tensor<2x3x4x4xf32>
  %gs = snn.sum_pool2d_bwd %g {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<1x2x3x3xf32> -> tensor<1x2x5x5xf32>
  // The same pooling as %a: one kernel serves both.
  %b = snn.avg_pool2d %x {kernel_size = array<i64: 2, 2>} : tensor<2x3x4x4xf32> -> tensor<2x3x2x2xf32>
  %g5 = snn.max_pool2d_bwd %g6, %z6 {kernel_size = array<i64: 5, 5>, stride = array<i64: 1, 1>, padding = array<i64: 2, 2>} : tensor<1x1x6x6xf32> -> tensor<1x1x6x6xf32>
  return %a, %m, %gm, %ga, %gs, %b, %g5 : tensor<2x3x2x2xf32>, tensor<1x2x3x3xf32>, tensor<1x2x5x5xf32>, tensor<2x3x4x4xf32>, tensor<1x2x5x5xf32>, tensor<2x3x2x2xf32>, tensor<1x1x6x6xf32>
}

// Average pooling, windows inside the input: a thread per output element
// (24), its plane, row and column from 32-bit divisions by constants; four
// taps with no bounds check, summed in row-major order, then divided by 4.
// CHECK-LABEL: gpu.func @snn_op0_avg_pool(
// CHECK-SAME: %[[X:.*]]: memref<96xf32>, %[[Y:.*]]: memref<24xf32>) kernel
// CHECK: %[[O:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: arith.remui %[[O]], %c2_i32
// CHECK: arith.divui %[[O]], %c2_i32
// CHECK-NOT: arith.select
// CHECK-COUNT-4: memref.load %[[X]]
// CHECK-NOT: arith.select
// CHECK: %[[SUM:.*]] = arith.addf
// CHECK-NEXT: %[[AREA:.*]] = arith.constant 4.000000e+00 : f32
// CHECK-NEXT: %[[AVG:.*]] = arith.divf %[[SUM]], %[[AREA]] : f32
// CHECK: memref.store %[[AVG]], %[[Y]]
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return

// Max pooling with padding: each of the 9 taps is bounds-checked (one
// unsigned comparison per dim: a negative row is a large number) and reads
// the plane's first element instead when outside; a NaN wins over a number.
// CHECK-LABEL: gpu.func @snn_op1_max_pool(
// CHECK-SAME: %[[X:.*]]: memref<50xf32>, %[[Y:.*]]: memref<18xf32>)
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[ROWIN:.*]] = arith.cmpi ult, %{{.*}}, %c5_i32
// CHECK: %[[COLIN:.*]] = arith.cmpi ult, %{{.*}}, %c5_i32
// CHECK: %[[IN:.*]] = arith.andi %[[ROWIN]], %[[COLIN]] : i1
// CHECK: %[[AT:.*]] = arith.select %[[IN]], %{{.*}}, %{{.*}} : i32
// CHECK: %[[I:.*]] = arith.index_cast %[[AT]] : i32 to index
// CHECK: %[[V:.*]] = memref.load %[[X]][%[[I]]]
// CHECK: %[[GT:.*]] = arith.cmpf ogt, %[[V]], %[[NEGINF]] : f32
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[V]], %[[V]] : f32
// CHECK: %[[NUM:.*]] = arith.cmpf ord, %[[NEGINF]], %[[NEGINF]] : f32
// CHECK: %[[NANWINS:.*]] = arith.andi %[[NAN]], %[[NUM]] : i1
// CHECK: %[[TAKE:.*]] = arith.ori %[[GT]], %[[NANWINS]] : i1
// CHECK: %[[BEST:.*]] = arith.select %[[TAKE]], %[[V]], %[[NEGINF]] : f32
// CHECK: arith.select %[[IN]], %[[BEST]], %[[NEGINF]] : f32
// CHECK-COUNT-8: memref.load %[[X]]
// CHECK-NOT: memref.load
// CHECK: memref.store %{{.*}}, %[[Y]]

// Max pooling's gradient, overlapping windows: a thread per input element
// (50) gathers the windows that hold it (9 candidates, each recomputing its
// first maximum: 81 reads of x) and adds their gradient where it is theirs.
// No atomics, no zeroing pass: every element of gx is written once.
// CHECK-LABEL: gpu.func @snn_op2_max_pool_bwd(
// CHECK-SAME: %[[GY:.*]]: memref<18xf32>, %[[X:.*]]: memref<50xf32>, %[[GX:.*]]: memref<50xf32>)
// CHECK: arith.cmpi ult, %{{.*}}, %c50 : index
// CHECK-COUNT-81: memref.load %[[X]]
// CHECK-NOT: memref.load %[[X]]
// CHECK: memref.store %{{.*}}, %[[GX]]
// CHECK-NOT: memref.store
// CHECK: gpu.return

// Average pooling's gradient, tiling windows: a thread per window reads its
// gradient once, scales it by 1/4 and writes the window's four elements.
// CHECK-LABEL: gpu.func @snn_op3_avg_pool_bwd(
// CHECK-SAME: %[[GY:.*]]: memref<24xf32>, %[[GX:.*]]: memref<96xf32>)
// CHECK: %[[G:.*]] = memref.load %[[GY]]
// CHECK-NEXT: %[[QUARTER:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT: %[[S:.*]] = arith.mulf %[[G]], %[[QUARTER]] : f32
// CHECK-COUNT-4: memref.store %[[S]], %[[GX]]
// CHECK-NOT: memref.load
// CHECK: gpu.return

// Sum pooling's gradient, stride 2 with padding: a window holds the element
// when (row + pad - tap) is a multiple of the stride and in range.
// CHECK-LABEL: gpu.func @snn_op4_sum_pool_bwd(
// CHECK-SAME: %[[GY:.*]]: memref<18xf32>, %[[GX:.*]]: memref<50xf32>)
// CHECK: %[[T:.*]] = arith.addi %{{.*}}, %c1_i32
// CHECK-NEXT: %{{.*}} = arith.constant 2 : i32
// CHECK-NEXT: %[[W:.*]] = arith.divui %[[T]], %{{.*}} : i32
// CHECK: %[[REM:.*]] = arith.remui %[[T]], %{{.*}} : i32
// CHECK: %[[ALIGNED:.*]] = arith.cmpi eq, %[[REM]], %{{.*}} : i32
// CHECK: %[[INRANGE:.*]] = arith.cmpi ult, %[[W]], %{{.*}} : i32
// CHECK: arith.andi %[[ALIGNED]], %[[INRANGE]] : i1
// CHECK-COUNT-9: memref.load %[[GY]]
// CHECK-NOT: arith.mulf
// CHECK: memref.store %{{.*}}, %[[GX]]

// Max pooling's gradient with 5x5 windows: the 25 candidate windows are
// unrolled, each one's maximum is a loop over its 25 taps (best, position).
// CHECK-LABEL: gpu.func @snn_op5_max_pool_bwd(
// CHECK-SAME: %[[GY:.*]]: memref<36xf32>, %[[X:.*]]: memref<36xf32>, %[[GX:.*]]: memref<36xf32>)
// CHECK-COUNT-25: scf.for %{{.*}} = %c0_i32{{.*}} to %c25_i32{{.*}} step %c1_i32{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %c-1_i32{{.*}}) -> (f32, i32)  : i32 {
// CHECK-NOT: scf.for
// CHECK: memref.store %{{.*}}, %[[GX]]
// The second average pooling of %x shares snn_op0.
// CHECK-NOT: gpu.func @snn_op6

// HOST-LABEL: func.func @snn_op0_avg_pool(
// HOST-SAME: %[[X:[^:]*]]: memref<96xf32>, %[[Y:[^:]*]]: memref<24xf32>, %{{.*}}: index, %{{.*}}: index)
// HOST-SAME: snn.host_items = 24 : i64
// HOST: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c1 {
// HOST: arith.index_cast %[[I]] : index to i32
// HOST-COUNT-4: memref.load %[[X]]
// HOST: memref.store %{{.*}}, %[[Y]]
// HOST-LABEL: func.func @snn_op2_max_pool_bwd(
// HOST-SAME: snn.host_items = 50 : i64
// HOST: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1 {

// NVVM-LABEL: llvm.func @snn_op0_avg_pool(
// NVVM-SAME: nvvm.kernel
// NVVM: llvm.urem %{{.*}} : i32
// NVVM: llvm.udiv %{{.*}} : i32
// NVVM: llvm.fdiv
