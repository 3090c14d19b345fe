#pragma once
// Delegate backends: plugins that run whole groups of nodes as one compiled kernel
// (delegates/README.md). The model is ONNX Runtime's execution providers: the backend
// *claims* groups of a block's nodes it can run (its GetCapability), core checks each
// claim and wraps an accepted group into one `brisk::delegate` node whose nested block
// keeps the original nodes, and the backend *compiles* each such node into a kernel
// when kernels are chosen. The partitioner, not the backend, cuts the graph.
//
// Lifetimes: claim() sees the Graph while passes still edit it; it must not keep any
// pointer past its return. compile() runs once per Module generation (a swapWeights
// builds a new generation and so compiles again, re-packing weights); the
// CompiledPartition it returns is owned by that generation's kernel and may keep
// pointers into the Partition's nodes and constants, which the generation's Graph owns.
//
// Threading: claim() and compile() run at load, on the loading thread, possibly on
// several loads at once (one backend object serves every Module): they must not write
// shared state without their own lock. CompiledPartition::run is called by every
// Runtime of the Module at once: per-call state lives in the DelegateState that
// newState() made for the calling Runtime (the hot path takes no lock).
//
// Part of the plugin API: no torch headers beyond kernel.h's.
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/graph/graph.h"  // kDelegateKind
#include "core/kernels/kernel.h"

namespace brisk {

class Block;
class Graph;
class Node;
class Value;
struct Options;

// What a backend may ask at load time.
struct DelegateContext {
  const std::string& model;  // for messages
  const Options& options;
};

// One accepted claim, as compile() receives it. `node` is the brisk::delegate node that
// wraps the group: its inputs are the group's non-constant inputs from outside (in the
// order the kernel receives them, KernelContext::input(i)), its outputs are the group's
// values read outside (KernelContext::output(j)); `node.block(0)` holds the original
// nodes, reading those inputs and constants directly, and returns the values behind the
// outputs. `graph` is the whole graph, to look at who reads the outputs.
//
// `releasable`: constants read by nothing but this nested block (releasable_constants.h).
// A backend that keeps its own copy of one may free its bytes (the tensor's storage
// keeps its size, with no data), to hold the weight once instead of twice. It must then
// put the same bytes back before any run() of it returns false, since the nested block
// reads them after that; a weight the backend changed (a folded batch norm) cannot be
// put back exactly and must not be freed.
struct Partition {
  const Graph& graph;
  const Node& node;
  const std::vector<const Value*>& releasable;
};

// Per-Runtime state of one compiled partition (argument maps, streams, a cache of
// per-shape plans). Made by the Runtime's first call, destroyed with the Runtime.
using DelegateState = KernelState;

class CompiledPartition {
 public:
  virtual ~CompiledPartition() = default;
  // Runs the partition: reads ctx.input(i), writes ctx.output(j) (an output slot may
  // still hold the tensor of this Runtime's previous run). `state` is this Runtime's
  // state from newState() (null when that returned null). Returns false, having written
  // nothing, for inputs it cannot serve (a shape or dtype it does not handle): core
  // then runs the nested block on brisk's own kernels. Throws for real errors.
  virtual bool run(KernelContext& ctx, DelegateState* state) const = 0;
  virtual std::unique_ptr<DelegateState> newState() const { return nullptr; }
  // One line for `brisk inspect`: what runs, e.g. "conv 3x3 + bias + relu (nhwc)".
  virtual std::string describe() const = 0;
  // Layout conversions the partition makes at its edges, for `brisk inspect`
  // ("input 0: nchw -> nhwc"); empty when none.
  virtual std::vector<std::string> edgeConversions() const { return {}; }
  // True when the partition has one output and makes it as one allocation through the
  // c10 CPU allocator, which brisk may then serve from its memory plan
  // (core/kernels/output_capture.h); its other allocations during run() are served as
  // step-local scratch from the plan too. False: outputs are left to the heap.
  virtual bool outputPlannable() const { return false; }
};

class DelegateBackend {
 public:
  virtual ~DelegateBackend() = default;
  // Groups of `block`'s own nodes (not of its nested blocks; core asks again for each
  // of those) this backend can run, each a list of nodes in any order. Core checks
  // every group (core/kernels/partitioner.h) and wraps those that pass; a group that
  // fails a check is dropped with a warning naming the backend, the nodes and why.
  virtual std::vector<std::vector<const Node*>> claim(const Block& block, const DelegateContext& ctx) const = 0;
  // Compiles one accepted group into a kernel. Returning null declines it; a throw is
  // reported as a warning. Either way the group runs its nested block on brisk's
  // kernels: trying a backend never loses a model.
  virtual std::unique_ptr<CompiledPartition> compile(const Partition& p, const DelegateContext& ctx) const = 0;
};

// Backends by name; plugins add (PluginRegistrar::delegate), Modules look up by the
// names in Options::delegates.
class DelegateRegistry {
 public:
  struct Entry {
    std::string name;
    std::string provider;  // the plugin that registered it
    std::shared_ptr<const DelegateBackend> backend;
  };
  // Throws brisk::Error when the name is empty or taken by another provider (the same
  // plugin loaded twice re-registers its own name: kept).
  void add(std::string name, std::shared_ptr<const DelegateBackend> backend, std::string provider);
  // Null when no backend has that name.
  std::shared_ptr<const DelegateBackend> find(const std::string& name) const;
  std::vector<std::string> names() const;

 private:
  mutable std::mutex mu_;
  std::vector<Entry> entries_;
};

// The attribute of a delegate node (kDelegateKind, graph.h) naming its backend.
inline constexpr const char* kDelegateBackendAttr = "backend";
// The attribute listing its releasable constants (value ids; releasable_constants.h).
inline constexpr const char* kReleasableAttr = "releasable";

}  // namespace brisk
