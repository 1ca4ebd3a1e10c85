// RUN: snn-opt %s --snn-autodiff="optimizer=adam" --snn-split-time="parts=4" | FileCheck %s

// Every layer kind of a feed-forward net under a split of T = 6 over 4 ranks
// (lengths 1, 2, 1, 2): convolution, plif (its weight gradient summed over
// the ranks), a residual add (gradients accumulated locally), pooling,
// flatten and an li readout with the membrane loss.

// CHECK-LABEL: func.func @train_step_t1(%{{.*}}: tensor<1x2x1x4x4xf32>, %{{.*}}: tensor<2xi32>) -> tensor<f32>
// CHECK-SAME: snn.ranks = array<i64: 0, 2>
// CHECK: %[[C:.*]] = snn.conv2d %{{.*}} -> tensor<1x2x2x4x4xf32>
// CHECK: %[[V0:.*]] = snn.recv from prev tag 0 or %{{.*}} : tensor<2x2x4x4xf32>
// CHECK: %[[S:.*]], %{{.*}} = snn.plif %[[C]], %{{.*}} init(%[[V0]] : tensor<2x2x4x4xf32>)
// CHECK: snn.add %[[S]], %[[C]] : tensor<1x2x2x4x4xf32>
// CHECK: snn.max_pool2d %{{.*}} : tensor<1x2x2x4x4xf32> -> tensor<1x2x2x2x2xf32>
// CHECK: snn.flatten %{{.*}} : tensor<1x2x2x2x2xf32> -> tensor<1x2x8xf32>
// CHECK: %[[M:.*]], %{{.*}} = snn.li %{{.*}} init(%{{.*}} : tensor<2x3xf32>) {{.*}} : tensor<1x2x3xf32> -> tensor<2x3xf32>
// CHECK: %[[P:.*]] = snn.time_sum %[[M]] {scale = 0.16666666666666666 : f64}
// CHECK: %[[MEAN:.*]] = snn.all_reduce_sum %[[P]]
// CHECK: snn.loss_ce_membrane %[[MEAN]]
// CHECK: snn.reshape %{{.*}} : tensor<1x2x8xf32> -> tensor<1x2x2x2x2xf32>
// CHECK: %[[GP:.*]] = snn.max_pool2d_bwd %{{.*}} : tensor<1x2x2x2x2xf32> -> tensor<1x2x2x4x4xf32>
// CHECK: %[[GX:.*]], %[[GW:.*]], %[[G0:.*]] = snn.neuron_bwd %[[GP]], %[[S]] final(%{{.*}} : tensor<2x2x4x4xf32>) : tensor<1x2x2x4x4xf32>, tensor<1xf32> -> tensor<2x2x4x4xf32>
// CHECK: snn.send %[[G0]] to prev tag 0
// CHECK: %[[ACC:.*]] = snn.accumulate %[[GP]], %[[GX]] : tensor<1x2x2x4x4xf32>
// CHECK: %[[GCONV:.*]] = snn.conv2d_bwd %[[ACC]]
// CHECK: %[[SUMC:.*]] = snn.all_reduce_sum %[[GCONV]] : tensor<2x1x3x3xf32>
// CHECK-NEXT: snn.adam %{{.*}}, %[[SUMC]]
// CHECK: %[[SUMW:.*]] = snn.all_reduce_sum %[[GW]] : tensor<1xf32>
// CHECK-NEXT: snn.adam %{{.*}}, %[[SUMW]]
// CHECK-LABEL: func.func @train_step_t2
// CHECK-SAME: snn.ranks = array<i64: 1, 3>
func.func @forward(%x: tensor<6x2x1x4x4xf32>) -> tensor<6x2x3xf32> {
  %w1 = snn.param "conv1.weight" {init = #snn.init<kaiming_uniform>} : tensor<2x1x3x3xf32>
  %c1 = snn.conv2d %x, %w1 {padding = array<i64: 1, 1>} : tensor<6x2x1x4x4xf32>, tensor<2x1x3x3xf32> -> tensor<6x2x2x4x4xf32>
  %pw = snn.param "plif1.w" : tensor<1xf32>
  %s1 = snn.plif %c1, %pw : tensor<6x2x2x4x4xf32>, tensor<1xf32>
  %r = snn.add %s1, %c1 : tensor<6x2x2x4x4xf32>
  %p1 = snn.max_pool2d %r {kernel_size = array<i64: 2, 2>} : tensor<6x2x2x4x4xf32> -> tensor<6x2x2x2x2xf32>
  %f = snn.flatten %p1 : tensor<6x2x2x2x2xf32> -> tensor<6x2x8xf32>
  %w2 = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x8xf32>
  %h = snn.linear %f, %w2 : tensor<6x2x8xf32>, tensor<3x8xf32> -> tensor<6x2x3xf32>
  %o = snn.li %h {k = 0.2, c = 1.0} : tensor<6x2x3xf32>
  return %o : tensor<6x2x3xf32>
}
