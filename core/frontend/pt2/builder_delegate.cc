// torch.ops.higher_order.executorch_call_delegate -> brisk::call_delegate.
//
// NativeRT's lowering (torch.nativert.backends._lower_utils.lower_exported_program)
// replaces a program's body, or regions of it, by calls into AOTInductor-compiled
// files. A compiled region takes weights as its own constants, named by the original
// program's state-dict names; the delegate program does not lift them (the archive
// keeps them with the original program, and pt2.cc merges them into this program's
// state), or lifts them for the nodes left outside any region. So each call reads its
// operands and then every weight, and names them; the backend matches them to the
// region's constants.
#include <ATen/core/List.h>
#include <ATen/core/jit_type.h>

#include <algorithm>

#include "core/common/error.h"
#include "core/frontend/pt2/builder.h"
#include "core/graph/call_delegate.h"

namespace brisk::pt2 {

Value* Builder::stateValue(const std::string& name, const at::Tensor& t) {
  auto [it, fresh] = state_values_.try_emplace(name, nullptr);
  if (fresh) it->second = g_->addConstant(t, c10::TensorType::create(t));
  return it->second;
}

void Builder::convertCallDelegate(const Json& node) {
  const Json& ins = arrayAt(node, "inputs", "executorch_call_delegate");
  if (ins.empty()) throw Error("executorch_call_delegate has no inputs (expected the region's name first)");
  const Json& name_arg = at(ins[0], "arg", "executorch_call_delegate");
  if (unionKind(name_arg, "the region's name") != "as_string")
    throw Error("executorch_call_delegate's first input is not the region's name (a string)");
  const std::string region = name_arg.begin().value().get<std::string>();
  if (region.empty() || region.find('/') != std::string::npos || region.find("..") != std::string::npos)
    throw Error("executorch_call_delegate names the region '" + region + "', which is not a plain name");

  NodeSpec spec;
  spec.kind = kCallDelegateKind;
  // What the region was compiled for, per operand: the backend refuses other inputs
  // rather than hand compiled code a tensor it would read out of bounds.
  std::vector<int64_t> dtypes, ranks, dims;
  const Json& values = objectAt(*graph_, "tensor_values", "graph");
  for (size_t i = 1; i < ins.size(); ++i) {
    const Json& arg = at(ins[i], "arg", "executorch_call_delegate operand");
    if (unionKind(arg, "an operand") != "as_tensor")
      throw Error("executorch_call_delegate operand " + std::to_string(i - 1) + " is a '" +
                  unionKind(arg, "an operand") + "', not a tensor");
    spec.inputs.push_back(args_.value(arg, nullptr));
    const std::string tensor = stringAt(arg.begin().value(), "name", "an operand");
    const Json& meta = objectAt(values, tensor.c_str(), "tensor_values");
    dtypes.push_back(static_cast<int64_t>(scalarType(intOf(at(meta, "dtype", tensor), tensor + ".dtype"))));
    const Json& sizes = arrayAt(meta, "sizes", tensor);
    ranks.push_back(static_cast<int64_t>(sizes.size()));
    for (const Json& d : sizes) dims.push_back(d.contains("as_int") ? intOf(d.at("as_int"), tensor + ".sizes") : -1);
  }
  const int64_t operands = static_cast<int64_t>(spec.inputs.size());
  // Every weight, sorted (the node's inputs, and so the kernel's, do not depend on hash
  // order): the region's constants are some of them, bound by an input spec or not.
  std::vector<std::string> weights;
  for (const auto& [name, t] : state_) weights.push_back(name);
  std::sort(weights.begin(), weights.end());
  for (const std::string& w : weights) spec.inputs.push_back(stateValue(w, state_.at(w)));

  // Its results: as_tensor entries, or one as_tensors list.
  std::vector<Json> outs;
  for (const Json& o : arrayAt(node, "outputs", "executorch_call_delegate")) {
    const std::string& kind = unionKind(o, "an executorch_call_delegate output");
    if (kind == "as_tensor") {
      outs.push_back(o);
    } else if (kind == "as_tensors" && o.begin().value().is_array()) {
      for (const Json& t : o.begin().value()) outs.push_back(Json{{"as_tensor", t}});
    } else {
      throw Error("executorch_call_delegate output of kind '" + kind + "' is not supported (tensors are)");
    }
  }
  for (size_t i = 0; i < outs.size(); ++i) spec.outputs.emplace_back(c10::TensorType::get(), "");
  Node* n = block_->appendNode(std::move(spec));
  // NativeRT's format keeps every region's files under data/aotinductor/ (pt2.cc checks
  // they are there), whatever backend id the lowering was given: AOTInductor runs it.
  n->setAttribute(kCallDelegateBackendAttr, c10::IValue(std::string("aoti")));
  n->setAttribute(kCallDelegateNameAttr, c10::IValue(region));
  n->setAttribute(kCallDelegateArchiveAttr, c10::IValue(g_->name()));
  n->setAttribute(kCallDelegateOperandsAttr, c10::IValue(operands));
  n->setAttribute(kCallDelegateWeightsAttr, c10::IValue(c10::List<std::string>(weights)));
  n->setAttribute(kCallDelegateDtypesAttr, c10::IValue(c10::List<int64_t>(dtypes)));
  n->setAttribute(kCallDelegateRanksAttr, c10::IValue(c10::List<int64_t>(ranks)));
  n->setAttribute(kCallDelegateDimsAttr, c10::IValue(c10::List<int64_t>(dims)));
  for (size_t i = 0; i < outs.size(); ++i) bindOutput(outs[i], n->output(i));
  delegate_calls_.push_back(region);
}

}  // namespace brisk::pt2
