// RUN: snn-opt %s --snn-neuron-to-gpu="h-dtype=bf16 spike-bits=1" --split-input-file | FileCheck %s
// RUN: not snn-opt %s --snn-neuron-to-gpu="h-dtype=f16" --split-input-file 2>&1 | FileCheck %s --check-prefix=DTYPE

// DTYPE: error: h-dtype must be f32 or bf16, not 'f16'
// Reduced storage: H rounded to bf16 (8-byte stores of 4 lanes), spikes as
// bits packed over time. T = 12 fits one 16-bit word per neuron: an outer
// loop over 1 word, an inner one over min(16, 12 - 16 w) steps that ORs bit j
// in, and one 8-byte store of the 4 lanes' words after it.
// CHECK-LABEL: gpu.func @snn_net_0_lif_fwd_h(
// CHECK-SAME: %[[X:.*]]: memref<768xf32> {llvm.noalias}, %[[S:.*]]: memref<64xi16> {llvm.noalias}, %[[H:.*]]: memref<768xbf16> {llvm.noalias})
// CHECK: scf.for %[[W:.*]] = %c0 to %c1 step %c1 iter_args(%{{.*}}) -> (vector<4xf32>)
// CHECK: %[[LEFT:.*]] = arith.subi %c12, %{{.*}} : index
// CHECK: %[[COUNT:.*]] = arith.minui %[[LEFT]], %c16 : index
// CHECK: %[[STEPS:.*]]:2 = scf.for %[[J:.*]] = %c0 to %[[COUNT]] step %c1 iter_args(%{{.*}}, %[[WORD:.*]] = %{{.*}}) -> (vector<4xf32>, vector<4xi16>)
// CHECK: vector.load %[[X]]
// CHECK: %[[SPIKE:.*]] = arith.cmpf oge
// CHECK: %[[HB:.*]] = arith.truncf %{{.*}} : vector<4xf32> to vector<4xbf16>
// CHECK: vector.store %[[HB]], %[[H]][%{{.*}}] {alignment = 8 : i64} : memref<768xbf16>, vector<4xbf16>
// CHECK: %[[J16:.*]] = arith.index_cast %[[J]] : index to i16
// CHECK: %[[SHIFT:.*]] = vector.broadcast %[[J16]] : i16 to vector<4xi16>
// CHECK: %[[ONE:.*]] = arith.select %[[SPIKE]]
// CHECK: %[[BIT:.*]] = arith.shli %[[ONE]], %[[SHIFT]] : vector<4xi16>
// CHECK: arith.ori %[[WORD]], %[[BIT]] : vector<4xi16>
// CHECK: }
// CHECK: vector.store %[[STEPS]]#1, %[[S]][%{{.*}}] {alignment = 8 : i64} : memref<64xi16>, vector<4xi16>
// The backward reads H back as bf16 and widens it.
// CHECK-LABEL: gpu.func @snn_net_0_lif_bwd(
// CHECK-SAME: %{{.*}}: memref<768xf32> {llvm.noalias}, %[[HIN:.*]]: memref<768xbf16> {llvm.noalias}, %{{.*}}: memref<768xf32> {llvm.noalias})
// CHECK: %[[HV:.*]] = vector.load %[[HIN]][%{{.*}}] {alignment = 8 : i64} : memref<768xbf16>, vector<4xbf16>
// CHECK: arith.extf %[[HV]] : vector<4xbf16> to vector<4xf32>
func.func @net(%x: tensor<12x2x32xf32>) -> tensor<12x2x32xf32> {
  %s = snn.lif %x {k = 0.5, c = 0.5, v_th = 1.0} : tensor<12x2x32xf32>
  return %s : tensor<12x2x32xf32>
}

// -----

// li has no spikes: its output stays f32 and only H is bf16. T = 40 with
// spike bits on a spiking layer takes two 32-bit words (see the host check).
// CHECK-LABEL: gpu.func @snn_net_0_li_fwd_h(
// CHECK-SAME: %{{.*}}: memref<80xf32> {llvm.noalias}, %{{.*}}: memref<80xf32> {llvm.noalias}, %{{.*}}: memref<80xbf16> {llvm.noalias})
// CHECK-LABEL: gpu.func @snn_net_1_cuba_lif_fwd_h(
// CHECK-SAME: %{{.*}}: memref<320xf32> {llvm.noalias}, %{{.*}}: memref<16xi32> {llvm.noalias}, %{{.*}}: memref<320xbf16> {llvm.noalias}, %{{.*}}: memref<320xf32> {llvm.noalias})
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1
func.func @net(%x: tensor<20x1x4xf32>, %y: tensor<40x2x4xf32>) -> (tensor<20x1x4xf32>, tensor<40x2x4xf32>) {
  %v = snn.li %x {k = 0.5, c = 1.0} : tensor<20x1x4xf32>
  %s = snn.cuba_lif %y {k = 0.5, c = 1.0, k_syn = 0.5, c_syn = 1.0} : tensor<40x2x4xf32>
  return %v, %s : tensor<20x1x4xf32>, tensor<40x2x4xf32>
}
