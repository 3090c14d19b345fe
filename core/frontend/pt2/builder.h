#pragma once
// The PT2 graph builder's state, shared by its files: graph_builder.cc (the
// program: devices, output specs, outputs), builder_inputs.cc (the forward's inputs:
// pytree flattening, size and constant checks), builder_nodes.cc (nodes: operators,
// torch.cond, load-time folding), builder_loop.cc (while_loop) and builder_delegate.cc
// (calls into regions compiled ahead of time). Internal to the PT2 frontend.
#include <ATen/core/Tensor.h>
#include <ATen/core/function_schema.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/frontend/pt2/arguments.h"
#include "core/frontend/pt2/folding.h"
#include "core/frontend/pt2/graph_builder.h"
#include "core/graph/graph.h"

namespace brisk::pt2 {

// "torch.ops.aten.add.Tensor" -> {"aten::add", "Tensor"}; "_operator.mul" on SymInts ->
// {"aten::mul", "int"} (the overload follows the node's argument kinds, `inputs`: on a
// SymFloat and an int, "float_int"); "torch.sym_float" -> {"aten::Float", "int"}.
c10::OperatorName operatorFor(const std::string& target, const Json& inputs);
// The dispatcher's schema when the dispatcher has the op; else the JIT registry's.
const c10::FunctionSchema* schemaFor(const c10::OperatorName& name);

class Builder {
 public:
  Builder(const Json& program, const std::unordered_map<std::string, at::Tensor>& state, const std::string& name);
  BuiltProgram build(bool fold_batch_norm);

 private:
  void checkTensorValues();
  void checkOutputSpecs();

  const Json& rootSignature();
  void bindInputs();

  // The caller's name for user input `i`: in_spec's leaves are args then kwargs.
  std::string leafName(size_t i, size_t count) const;

  // ep.module() refuses a value other than the exported one; so does brisk, rather than
  // silently computing with the exported value.
  void addConstantCheck(const std::string& name, Value* input, const Json& exported);

  // The sizes the program was exported for: static dims exactly, a dynamic dim that is
  // one symbol within its range_constraints entry. Derived dims (s0 + 1) are left to
  // the kernels.
  void addDimRelationCheck(const std::vector<const Json*>& user_inputs, const std::vector<Value*>& leaves);
  void addSizeCheck(const std::string& name, Value* input);
  static c10::TypePtr leafType(const Json& a);

  void convertNode(const Json& node);
  // The graph constant of state tensor `name` (made on first use).
  Value* stateValue(const std::string& name, const at::Tensor& t);

  // torch.ops.higher_order.executorch_call_delegate(name, *operands) ->
  // brisk::call_delegate (core/graph/call_delegate.h), reading the operands and then
  // every weight of the program (builder_delegate.cc).
  void convertCallDelegate(const Json& node);

  // torch.cond(pred, true_fn, false_fn, operands) -> prim::If with one block per
  // branch. Each branch is a subgraph with its own names, whose inputs are the operands
  // (lifted weights among them); brisk's blocks read outer values directly, so its
  // inputs are bound to the operands' values and its outputs become block returns.
  void convertCond(const Json& node);
  void buildBranch(const Json& sub, const std::vector<Value*>& operands, Block* block, size_t num_outputs);

  // torch.ops.higher_order.while_loop(cond_graph, body_graph, carried, additional) ->
  // prim::Loop whose body runs body_graph then a copy of cond_graph (builder_loop.cc).
  void convertWhileLoop(const Json& node);
  // A while_loop's cond_graph must return one one-element bool tensor and its
  // body_graph one value per carried input, each of the carried input's dtype and rank.
  static void checkLoopGraphs(const Json& cond, const Json& body, size_t carried);

  // Converts the nodes of subgraph `sub` (a torch.cond branch, a while_loop cond or
  // body) into `block` with its inputs bound to `inputs`, in a scope of its own (its
  // names may repeat the enclosing graph's); returns the values of its outputs.
  std::vector<Value*> inlineSubgraph(const Json& sub, const std::vector<Value*>& inputs, Block* block,
                                     const std::string& what);
  // A one-element bool tensor (what torch.cond and while_loop's cond_fn give) as a
  // bool, by aten::Bool appended to `block`; a bool is returned as it is.
  Value* toBool(Value* pred, Block* block);
  // An `as_tensors` argument (a HOP's operands) -> its values.
  std::vector<Value*> tensorList(const Json& arg, const std::string& what);

  // A number known only at run time (a SymInt) passed where the schema wants a Tensor:
  // the op's Scalar overload, which takes it as the number eager would have wrapped;
  // null when no argument needs it. Throws when the op has no such overload.
  static const c10::FunctionSchema* scalarOverloadFor(const c10::OperatorName& name,
                                                      const c10::FunctionSchema& schema,
                                                      const std::vector<Value*>& inputs);

  // A node whose every input is a load-time constant becomes constants (folding.h).
  bool foldConstants(const c10::OperatorName& name, const c10::FunctionSchema& schema,
                     const std::vector<Value*>& inputs, const Json& outs);

  // The serialized argument `name` of `node`, or null when the call did not pass it.
  static const Json* namedArg(const Json& node, const std::string& name);

  // An inference batch norm that is this convolution's only reader folds into the
  // convolution's constant weight and bias (folding.h); the batch norm node is then
  // skipped and its result is the convolution's.
  void foldBatchNormInto(const std::string& target, const Json& node, NodeSpec& conv);

  // In-place writes to a parameter or buffer would change the Module's constants
  // across runs (the default export IR keeps `self.count.add_(1)` in place).
  void checkMutations(const c10::FunctionSchema& schema, const std::vector<Value*>& inputs);
  void bindOutput(const Json& out, Value* v);

  void bindOutputs();

  const std::unordered_map<std::string, at::Tensor>& state_;
  std::shared_ptr<Graph> g_;
  std::unordered_map<std::string, Value*> env_;
  ArgumentConverter args_;
  std::unordered_map<const Value*, std::string> state_of_;
  // State name -> its constant, one per name: what input specs bind and calls read.
  std::unordered_map<std::string, Value*> state_values_;
  std::vector<std::string> delegate_calls_;  // call_delegate names, in program order
  std::unordered_set<const Json*> constant_inputs_;
  // Conv-batch-norm folding: the program's tensor reads, and batch norms already folded
  // (their name -> the conv output).
  bool fold_batch_norm_ = false;
  TensorReads reads_;
  std::unordered_map<std::string, std::string> folded_into_conv_;
  Block* block_ = nullptr;  // where converted nodes go: the top block or a cond branch
  std::vector<Argument> args_out_;
  const Json* graph_ = nullptr;
  const Json* sig_ = nullptr;
  const Json* module_call_graph_ = nullptr;
  const Json* namedtuple_fields_ = nullptr;  // graph_module.treespec_namedtuple_fields, if any
  const Json* range_constraints_ = nullptr;
};

}  // namespace brisk::pt2
