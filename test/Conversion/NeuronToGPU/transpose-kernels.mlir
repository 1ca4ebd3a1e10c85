// The kernels of snn.transpose and of channels-last pooling that
// --snn-compile generates (docs/artifact-format.md, "Generated op kernels").
// RUN: snn-opt %s --snn-op-kernels | FileCheck %s
// RUN: snn-opt %s --snn-op-kernels=host=true | FileCheck %s --check-prefix=HOST

func.func @layouts(%x: tensor<2x3x4x5x6xf32>, %y: tensor<3x2x4x5x6xf32>, %p: tensor<2x4x4x3xf32>)
    -> (tensor<2x3x5x6x4xf32>, tensor<3x2x5x6x4xf32>, tensor<2x2x2x3xf32>) {
  %a = snn.transpose %x {permutation = array<i64: 0, 1, 3, 4, 2>} : tensor<2x3x4x5x6xf32> -> tensor<2x3x5x6x4xf32>
  // Another shape with the same merged copy ([6, 4, 30] -> [6, 30, 4]).
  %b = snn.transpose %y {permutation = array<i64: 0, 1, 3, 4, 2>} : tensor<3x2x4x5x6xf32> -> tensor<3x2x5x6x4xf32>
  %q = snn.avg_pool2d %p {channels_last, kernel_size = array<i64: 2, 2>} : tensor<2x4x4x3xf32> -> tensor<2x2x2x3xf32>
  return %a, %b, %q : tensor<2x3x5x6x4xf32>, tensor<3x2x5x6x4xf32>, tensor<2x2x2x3xf32>
}

// [T, B, C, H, W] -> [T, B, H, W, C] is the copy [TB, C, HW] -> [TB, HW, C]:
// a thread per output element; its channel (mod 4) steps HW = 30 in x, its
// pixel (mod 30) steps 1, its row TB steps 120.
// CHECK-LABEL: gpu.func @snn_op0_transpose(
// CHECK-SAME: %[[X:.*]]: memref<720xf32>, %[[Y:.*]]: memref<720xf32>) kernel
// CHECK: %[[C:.*]] = arith.remui %[[I:.*]], %c4{{[_0-9]*}} : index
// CHECK: %[[R:.*]] = arith.divui %[[I]], %c4{{[_0-9]*}} : index
// CHECK: arith.muli %[[C]], %c30{{[_0-9]*}} : index
// CHECK: arith.remui %[[R]], %c30{{[_0-9]*}} : index
// CHECK: arith.muli %{{.*}}, %c120{{[_0-9]*}} : index
// CHECK: %[[V:.*]] = memref.load %[[X]]
// CHECK: memref.store %[[V]], %[[Y]][%[[I]]]
// CHECK-NOT: gpu.func @snn_op{{[0-9]+}}_transpose

// Channels-last average pooling: the channel is the fastest index of a
// thread, and the window's taps are 3 elements (a pixel) apart.
// CHECK-LABEL: gpu.func @snn_op{{[0-9]+}}_avg_pool(
// CHECK-SAME: %[[PX:.*]]: memref<96xf32>, %[[PY:.*]]: memref<24xf32>) kernel
// CHECK: %[[O:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: arith.remui %[[O]], %c3_i32{{[_0-9]*}}
// CHECK: arith.divui %[[O]], %c3_i32{{[_0-9]*}}
// CHECK-COUNT-4: memref.load %[[PX]]
// CHECK: memref.store %{{.*}}, %[[PY]]

// The host function: a loop over its range of the 720 elements.
// HOST-LABEL: func.func @snn_op0_transpose(
// HOST-SAME: %[[X:[^:]*]]: memref<720xf32>, %[[Y:[^:]*]]: memref<720xf32>, %{{.*}}: index, %{{.*}}: index)
// HOST-SAME: snn.host_items = 720 : i64
// HOST: scf.for
// HOST: memref.load %[[X]]
// HOST: memref.store %{{.*}}, %[[Y]]
