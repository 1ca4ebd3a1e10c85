//===- SNNAttrs.td - snn dialect attributes ----------------*- tablegen -*-===//

#ifndef SNN_ATTRS_TD
#define SNN_ATTRS_TD

include "snn/Dialect/SNN/IR/SNNDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def SNN_ResetMode : I32EnumAttr<"ResetMode", "membrane reset after a spike", [
    I32EnumAttrCase<"Hard", 0, "hard">,  // V = v_reset
    I32EnumAttrCase<"Soft", 1, "soft">   // V = H - v_th (reset by subtraction)
  ]> {
  let cppNamespace = "::mlir::snn";
  let genSpecializedAttr = 0;
}
def SNN_ResetModeAttr : EnumAttr<SNN_Dialect, SNN_ResetMode, "reset"> {
  let assemblyFormat = "`<` $value `>`";
}

// The neighbour of a rank along a time split (--snn-split-time): the rank that
// owns the previous time range, or the next one.
def SNN_Peer : I32EnumAttr<"Peer", "neighbouring rank of a time split", [
    I32EnumAttrCase<"Prev", 0, "prev">,
    I32EnumAttrCase<"Next", 1, "next">
  ]> {
  let cppNamespace = "::mlir::snn";
}

def SNN_SurrogateKind : I32EnumAttr<"SurrogateKind", "surrogate gradient function", [
    I32EnumAttrCase<"Sigmoid", 0, "sigmoid">,
    I32EnumAttrCase<"Atan", 1, "atan">,
    I32EnumAttrCase<"Triangle", 2, "triangle">,
    I32EnumAttrCase<"FastSigmoid", 3, "fast_sigmoid">
  ]> {
  let cppNamespace = "::mlir::snn";
  let genSpecializedAttr = 0;
}

def SNN_InitKind : I32EnumAttr<"InitKind", "parameter initializer", [
    I32EnumAttrCase<"Zeros", 0, "zeros">,
    I32EnumAttrCase<"Ones", 1, "ones">,
    I32EnumAttrCase<"Constant", 2, "constant">,       // init_scale = the value
    I32EnumAttrCase<"Uniform", 3, "uniform">,         // U(-init_scale, init_scale)
    I32EnumAttrCase<"Normal", 4, "normal">,           // N(0, init_scale^2)
    I32EnumAttrCase<"KaimingUniform", 5, "kaiming_uniform"> // PyTorch Linear/Conv default
  ]> {
  let cppNamespace = "::mlir::snn";
  let genSpecializedAttr = 0;
}
def SNN_InitKindAttr : EnumAttr<SNN_Dialect, SNN_InitKind, "init"> {
  let assemblyFormat = "`<` $value `>`";
}

class SNN_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<SNN_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def SNN_SurrogateAttr : SNN_Attr<"Surrogate", "surrogate"> {
  let summary = "surrogate gradient: kind, sharpness alpha, optional gradient threshold";
  let description = [{
    The derivative used for the Heaviside spike function in the backward pass,
    evaluated at `u = H - v_th`:

    * `sigmoid`: `alpha * sg(alpha u) * (1 - sg(alpha u))` (SpikingJelly default, alpha = 4)
    * `atan`: `alpha / (2 (1 + (pi/2 alpha u)^2))` (alpha = 2)
    * `triangle`: `(1/alpha) max(0, 1 - |u|/alpha)` (alpha = 1)
    * `fast_sigmoid`: `1 / (alpha |u| + 1)^2` (SuperSpike, alpha = 10)

    With `theta_grad`, the derivative is 0 wherever `H < theta_grad`: a secondary
    gradient threshold that makes gradients sparse.

    With `grad_band = B`, the derivative is 0 wherever `|H - v_th| > B`: the
    symmetric band of the sparse backward (Perez-Nieves & Goodman, NeurIPS
    2021). Inside the band the surrogate keeps its shape. `B` is positive;
    an infinite `B` (`0x7FF0000000000000`) keeps every entry, as no band.
    Both thresholds may be given; the derivative is then 0 where either says so.

    Example: `#snn.surrogate<sigmoid, alpha = 4.0>`,
    `#snn.surrogate<fast_sigmoid, alpha = 10.0, theta_grad = 0.5>`,
    `#snn.surrogate<atan, alpha = 2.0, grad_band = 0.25>`.
  }];
  let parameters = (ins
    EnumParameter<SNN_SurrogateKind>:$kind,
    "::mlir::FloatAttr":$alpha,
    OptionalParameter<"::mlir::FloatAttr">:$theta_grad,
    OptionalParameter<"::mlir::FloatAttr">:$grad_band);
  let builders = [
    AttrBuilder<(ins "SurrogateKind":$kind, "::mlir::FloatAttr":$alpha,
                     "::mlir::FloatAttr":$theta_grad), [{
      return $_get($_ctxt, kind, alpha, theta_grad, ::mlir::FloatAttr());
    }]>
  ];
  // `key = value` pairs in any order; the optional ones may be left out.
  let assemblyFormat = "`<` $kind `,` struct($alpha, $theta_grad, $grad_band) `>`";
  let genVerifyDecl = 1;
}

#endif // SNN_ATTRS_TD
