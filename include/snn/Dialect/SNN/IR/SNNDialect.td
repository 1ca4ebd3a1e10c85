//===- SNNDialect.td - the snn dialect ---------------------*- tablegen -*-===//
//
// Spiking neural networks with a leading time axis. See docs/ and DESIGN §2.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_DIALECT_TD
#define SNN_DIALECT_TD

include "mlir/IR/OpBase.td"

def SNN_Dialect : Dialect {
  let name = "snn";
  let cppNamespace = "::mlir::snn";
  let summary = "Spiking neural networks: neuron layers, stateless layers and time loops";
  let description = [{
    The `snn` dialect describes spiking neural networks (SNNs) as trained with
    backpropagation through time. Tensors that carry time are *time-leading*:
    `[T, B, features...]`.

    A model exists in two forms:

    * the **step form**: an `snn.time_loop` whose body is one time step, with
      per-step neuron ops (`snn.lif_step`, ...) whose membrane state is carried
      between steps by the loop. Importers (NIR) and recurrent networks produce it.
    * the **multi-step form**: every op takes the whole `[T, B, ...]` tensor;
      stateless ops (`snn.linear`, `snn.conv2d`, ...) apply to the trailing
      (sample) dimensions of any number of leading dimensions, so one GEMM or
      convolution covers all `T*B` samples, and each neuron op (`snn.lif`, ...) is
      one scan over time. `--snn-temporal-fusion` turns the step form into it.

    Parameters are named values created by `snn.param`; their names are the keys of
    checkpoints (safetensors) and of NIR weights. A model is a `func.func` (by
    convention `@forward`) taking the time-leading input and returning the
    time-leading output.
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

class SNN_Op<string mnemonic, list<Trait> traits = []>
    : Op<SNN_Dialect, mnemonic, traits>;

#endif // SNN_DIALECT_TD
