#pragma once
// A node's serialized arguments (NamedArgument / Argument unions) -> brisk Values.
// Arguments are bound to the schema by name; the serializer omits the ones the call
// did not pass, so those take the schema's default. Scalars become constants, with
// the schema deciding their IValue kind: a Python number in a Tensor slot is a 0-dim
// wrapped-number tensor (eager type promotion), an int in a float slot a double.
// Tensor and symbolic lists become prim::ListConstruct nodes, as TorchScript has them.
#include <ATen/core/function_schema.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "core/frontend/pt2/schema.h"

namespace brisk {
class Block;
class Graph;
class Value;
}  // namespace brisk

namespace brisk::pt2 {

class ArgumentConverter {
 public:
  ArgumentConverter(Graph& g, const std::unordered_map<std::string, Value*>& env) : g_(g), env_(env) {}

  // One Value per schema argument, in the schema's order.
  std::vector<Value*> bind(const Json& named_args, const c10::FunctionSchema& schema);
  // One argument; `slot` (may be null) is the schema argument it is passed to.
  Value* value(const Json& arg, const c10::Argument* slot);
  // Where list-building nodes go: the block being converted (a torch.cond branch
  // builds into its own block); null = the graph's top block.
  void setBlock(Block* block) { block_ = block; }

 private:
  Value* constant(c10::IValue v);
  Value* named(const std::string& name);
  Value* symbolic(const Json& body, const std::string& kind, const c10::Argument* slot);
  Value* list(const Json& items, const std::string& kind, const c10::Argument* slot);

  Graph& g_;
  const std::unordered_map<std::string, Value*>& env_;
  Block* block_ = nullptr;
};

}  // namespace brisk::pt2
