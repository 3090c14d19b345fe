#pragma once
// The one rule for "running this node does something besides computing its outputs".
// Dead-code elimination (a node with effects is never removed), the parallel executor
// (nodes with effects keep their order), constant folding (never computed at load) and
// the delegate partitioner (never claimed) all ask here, so a node is treated the same
// way whichever frontend built it: a PT2 aten::rand is as ordered as its TorchScript
// twin.
//
// The partitioner alone looks closer (writtenInputsOnly): an in-place op whose only
// effect is writing a value its group produces and alone reads changes nothing outside
// the group, so it may be delegated with it.
//
// Effects are: writing an argument (a mutable schema: in-place ops, list mutation),
// observable side effects (print, warn, raise, assert, brisk's own input checks),
// nondeterminism (random ops consume the generator in order; uninitialized memory),
// a fork's subgraph or a nested block holding any of these, and any schema-less node that is not one
// of the pure prim ops (a hand-built node we know nothing about).
#include <optional>
#include <string>
#include <vector>

namespace brisk {

class Node;
class Value;

bool hasEffects(const Node& n);

// The inputs `n` writes, when writing them is its only effect (an in-place op: the
// `self` of aten::relu_ or aten::add_.Tensor); nullopt when it has any other effect
// (hasEffects' other kinds) or no schema to say which arguments it writes.
std::optional<std::vector<const Value*>> writtenInputsOnly(const Node& n);

// Ops whose result depends on more than their inputs (random generators, uninitialized
// memory): never computed at load, never reordered.
bool nondeterministic(const std::string& op_name);

}  // namespace brisk
