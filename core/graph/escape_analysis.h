#pragma once
// Which values may be referenced after a run ends ("escape"): graph outputs, anything
// reachable from them through views and containers, and anything stored into a
// container the schema cannot track (wildcard alias sets, e.g. aten::append's element).
// A tensor that does not escape may be reused by its kernel across runs (and, with
// memory planning, placed in the slab); one that escapes must be fresh every run,
// because the caller may still hold the previous run's result.
#include <cstdint>
#include <vector>

namespace brisk {

class Graph;
class Node;
class Value;

// Inputs of `node` that its outputs may alias or contain: those whose schema argument
// carries alias info (wildcards included), or every input when the node has no usable
// schema (prim ops, control flow, vararg ops), plus the input an in-place reuse may
// write its result into (Node::reusableInput). The edges escape analysis propagates
// along; the memory planner uses them to extend a tensor's lifetime over its views.
std::vector<Value*> aliasedInputs(const Node& node);

// Per value id: 1 when the value may escape. Conservative: unknown ops (no schema)
// are assumed to alias every input into every output, and sub-block results
// (If/Loop) are treated as escaping so loop-carried values are never overwritten
// while still referenced by the next iteration.
std::vector<uint8_t> findEscapingValues(const Graph& graph);

}  // namespace brisk
