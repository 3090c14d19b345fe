#pragma once
// torch.export's pytree specs: the in_spec that flattens a call's (args, kwargs) into
// the program's user inputs, and the out_spec that rebuilds its outputs. brisk runs
// both as graph nodes (tuple/list unpack, dict lookups, tuple/list/dict construction),
// so a Module's inputs and outputs keep the structure the exported module had and the
// hot path stays a plain walk over steps.
#include <ATen/core/jit_type.h>

#include "core/frontend/pt2/schema.h"  // Json

#include <string>
#include <vector>

namespace brisk {
class Block;
class Graph;
class Value;
}  // namespace brisk

namespace brisk::pt2 {

struct TreeSpec {
  enum class Kind { kLeaf, kTuple, kList, kDict };
  Kind kind = Kind::kLeaf;
  std::vector<std::string> keys;  // kDict: one per child
  // kTuple from a namedtuple: its serialized type name ("my.Out") and, when the archive
  // records them (graph_module.treespec_namedtuple_fields), its field names.
  std::string type_name;
  std::vector<std::string> field_names;
  std::vector<TreeSpec> children;
  size_t numLeaves() const;
};

// Parses the serialized form: JSON [1, {"type", "context", "children_spec"}].
// `namedtuple_fields`: the graph module's treespec_namedtuple_fields ({type name:
// {"field_names": [...]}}), or null.
TreeSpec parseTreeSpec(const std::string& text, const std::string& what,
                       const Json* namedtuple_fields = nullptr);

// The TorchScript type a value of this structure has, given its leaves' types in
// depth-first order (consumed from `leaf`).
c10::TypePtr structureType(const TreeSpec& spec, const std::vector<c10::TypePtr>& leaf_types, size_t& leaf);

// Appends to `block` the nodes that take `v` (of structure `spec`) apart; its leaves
// are appended to `leaves` in depth-first order.
void emitFlatten(Graph& g, Block& block, Value* v, const TreeSpec& spec, std::vector<Value*>& leaves);

// Appends the nodes that build a value of structure `spec` from `leaves` (consumed
// from `leaf`) and returns it.
Value* emitUnflatten(Graph& g, Block& block, const TreeSpec& spec, const std::vector<Value*>& leaves, size_t& leaf);

}  // namespace brisk::pt2
