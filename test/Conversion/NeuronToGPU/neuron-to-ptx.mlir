// The upstream NVVM pipeline turns the kernels into PTX without any CUDA tool.
// RUN: snn-opt %s --snn-neuron-to-gpu --convert-scf-to-cf \
// RUN:   --nvvm-attach-target="chip=sm_90 O=3" \
// RUN:   --convert-gpu-to-nvvm="use-bare-ptr-memref-call-conv=1" \
// RUN:   --reconcile-unrealized-casts --gpu-module-to-binary="format=isa" \
// RUN:   | %python %S/Inputs/extract_ptx.py > %t.ptx
// RUN: FileCheck %s < %t.ptx
// Nothing is spilled to local memory.
// RUN: FileCheck %s --check-prefix=NOLOCAL < %t.ptx
// NOLOCAL: .target sm_90
// NOLOCAL-NOT: .local

// The forward kernel of 2^23 LIF neurons over 64 steps: one `float*` per
// tensor, one loop whose body loads x once and stores s and h once, all with
// 16-byte accesses (read-only x through the non-coherent cache).
// CHECK-LABEL: .visible .entry snn_big_0_lif_fwd_h(
// CHECK-NEXT: .param .u64 .ptr .align 1 snn_big_0_lif_fwd_h_param_0,
// CHECK-NEXT: .param .u64 .ptr .align 1 snn_big_0_lif_fwd_h_param_1,
// CHECK-NEXT: .param .u64 .ptr .align 1 snn_big_0_lif_fwd_h_param_2
// CHECK-NEXT: )
// CHECK-NEXT: .maxntid 256, 1, 1
// CHECK: $L__BB0_1:
// CHECK-NOT: $L__BB0_
// CHECK: ld.global.nc.v4.b32
// CHECK-NOT: ld.global
// CHECK: st.global.v4.b32
// CHECK: st.global.v4.b32
// CHECK-NOT: st.global
// CHECK: @%p{{[0-9]+}} bra $L__BB0_1;
// CHECK-NEXT: ret;

// Backward: gs and h loaded, gx stored, per step, in one loop; 128 x 1024
// neurons per step are 32k threads, few enough that the scan is unrolled by
// 4 (four steps per iteration).
// CHECK-LABEL: .visible .entry snn_big_0_lif_bwd(
// CHECK: $L__BB1_1:
// CHECK-NOT: $L__BB1_
// CHECK-COUNT-4: st.global.v4.b32
// CHECK-NOT: st.global
// CHECK: @%p{{[0-9]+}} bra $L__BB1_1;
// CHECK-NEXT: ret;
func.func @big(%x: tensor<64x128x1024xf32>) -> tensor<64x128x1024xf32> {
  %s = snn.lif %x {k = 0.5, c = 0.5, v_th = 1.0} : tensor<64x128x1024xf32>
  return %s : tensor<64x128x1024xf32>
}

// N = 5 * 7 is not a multiple of 4: 4-byte accesses, a bounds check.
// CHECK-LABEL: .visible .entry snn_odd_0_cuba_lif_fwd_h(
// CHECK: setp.gt.u64 %p{{[0-9]+}}, %rd{{[0-9]+}}, 34;
// CHECK: ld.global.nc.b32
// CHECK-NOT: .v4.
// CHECK: ret;
func.func @odd(%x: tensor<16x5x7xf32>) -> tensor<16x5x7xf32> {
  %s = snn.cuba_lif %x {reset = #snn.reset<soft>} : tensor<16x5x7xf32>
  return %s : tensor<16x5x7xf32>
}
