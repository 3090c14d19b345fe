#pragma once
// brisk's own dataflow IR: Graph > Block > Node > Value.
//
// Built once at load (by a frontend or by hand in tests), rewritten by the load-time
// graph passes (graph_pass.h; graph_edit.cc), and immutable once a Module is built on it. Every Value of a Graph — including those inside sub-blocks — has a dense
// integer id, which is also its slot in a Runtime's IValue array, so the hot path
// never looks anything up by name. Constants are Values owned by the Graph with no
// producer. prim::If / prim::Loop carry sub-blocks; prim::fork carries a subgraph
// (its own Graph, run as a child Module).
#include <ATen/core/ivalue.h>
#include <ATen/core/jit_type.h>

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace c10 {
struct FunctionSchema;
}
namespace brisk {

// The op kind of a node that wraps a delegate partition (core/kernels/delegate.h): its
// one block holds the partition's original nodes.
inline constexpr const char* kDelegateKind = "brisk::delegate";

class Block;
class Graph;
class Node;

// One read of a value: input `index` of `user`, or, when `user` is null, return `index`
// of `block`.
struct Use {
  Node* user = nullptr;
  Block* block = nullptr;  // set for block returns only
  uint32_t index = 0;
  bool isReturn() const { return user == nullptr; }
  bool operator==(const Use& o) const { return user == o.user && block == o.block && index == o.index; }
};

class Value {
 public:
  uint32_t id() const { return id_; }
  const c10::TypePtr& type() const { return type_; }
  // Debug name from TorchScript (may be empty); never used for lookup.
  const std::string& name() const { return name_; }
  Node* producer() const { return producer_; }      // null for params and constants
  Block* owningBlock() const { return block_; }      // null for constants
  bool isConstant() const { return constant_ != nullptr; }
  const c10::IValue& constant() const { return *constant_; }
  // Every read of this value in every block of its graph (node inputs, nested ones
  // included, and block returns), kept current by every edit of the graph, so passes
  // never scan the graph for readers. Unordered.
  const std::vector<Use>& uses() const { return uses_; }
  bool hasUses() const { return !uses_.empty(); }
  // The node that reads this value, once, when nothing else reads it (no block
  // return); else null.
  Node* soleUser() const { return uses_.size() == 1 ? uses_.front().user : nullptr; }
  // "%name.id" or "%id": unique within the graph, stable across prints.
  std::string ref() const;

 private:
  friend class Graph;
  friend class Block;
  friend class Node;
  Value(uint32_t id, c10::TypePtr type, std::string name)
      : id_(id), type_(std::move(type)), name_(std::move(name)) {}
  void removeUse(const Use& u);
  // The read `u` of this value now reads `to`: its slot and both use lists change.
  void moveUse(const Use& u, Value* to);
  // The slot (node input or block return) that performs the read `u`.
  static Value*& slotOf(const Use& u);
  uint32_t id_;
  c10::TypePtr type_;
  std::string name_;
  Node* producer_ = nullptr;
  Block* block_ = nullptr;
  std::unique_ptr<c10::IValue> constant_;
  std::vector<Use> uses_;
};

struct FallbackOp;  // core/graph/fallback_op.h

// How to run a node on its frontend's own operator (the fallback kernel's source). The
// frontend makes one per node it can run that way (the TorchScript frontend asks the JIT
// for the node's Operation); nothing else in brisk sees what is behind it.
class FallbackSource {
 public:
  virtual ~FallbackSource() = default;
  // Empty when the frontend has no operator for the node.
  virtual std::optional<FallbackOp> operation() const = 0;
};

// Where in the model's source a node comes from (models that carry their code).
struct SourceLocation {
  std::string file;
  uint32_t line = 0;
};

// What the frontend knows of a node beyond its kind, schema and values, copied onto the
// node at conversion so that nothing downstream reads the frontend's own IR.
struct FrontendFacts {
  // The frontend's operator has side effects or is nondeterministic beyond what its
  // schema says (TorchScript's hasSideEffects/isNondeterministic).
  bool effectful = false;
  std::optional<SourceLocation> source;
  std::shared_ptr<const FallbackSource> fallback;  // null: fall back by schema, if at all
};

// The value of an int or float constant, as a double; nullopt for any other value (a
// tensor, a non-constant). Passes and backends read scalar arguments with it.
inline std::optional<double> constantNumber(const Value* v) {
  if (!v->isConstant()) return std::nullopt;
  const c10::IValue& c = v->constant();
  if (c.isDouble()) return c.toDouble();
  if (c.isInt()) return static_cast<double>(c.toInt());
  return std::nullopt;
}

class Node {
 public:
  // "aten::add", "prim::If".
  const std::string& kind() const { return kind_; }
  // Registry key: "aten::add.Tensor", or kind() when the op has no overload name.
  const std::string& key() const { return key_; }
  // The operator schema this node was matched to, or null (control flow, prim ops).
  const c10::FunctionSchema* schema() const { return schema_; }
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  Value* input(size_t i) const { return inputs_.at(i); }
  Value* output(size_t i) const { return outputs_.at(i); }
  const std::vector<std::unique_ptr<Block>>& blocks() const { return blocks_; }
  Block* block(size_t i) const { return blocks_.at(i).get(); }
  Graph* subgraph() const { return subgraph_.get(); }
  Block* owningBlock() const { return block_; }
  // Position in the graph's pre-order node numbering (used in messages/profiles).
  uint32_t index() const { return index_; }
  // Extra constant attributes (e.g. a delegate's backend name). Usually empty.
  const std::unordered_map<std::string, c10::IValue>& attributes() const { return attrs_; }
  void setAttribute(const std::string& name, c10::IValue v) { attrs_[name] = std::move(v); }
  // What the frontend it was converted from knows of it; empty for hand-built nodes.
  const FrontendFacts& frontend() const { return frontend_; }
  // An input that nothing but this node reads and that no other value aliases (set at
  // load by core/graph/inplace_reuse.h), so the kernel may write its result into that
  // tensor's memory instead of a new one; -1 when none. The output may then alias that
  // input (escape analysis and the memory planner treat it like a view).
  int reusableInput() const { return reusable_input_; }
  void setReusableInput(int i) { reusable_input_ = i; }

  Block* addBlock();
  void setSubgraph(std::unique_ptr<Graph> g);
  // Rewriting (graph passes): this node reads `v` as its input `i`.
  void replaceInput(size_t i, Value* v);
  // The node of `b` that is this node or holds it in one of its blocks; null when this
  // node is not inside `b`.
  Node* enclosingNodeIn(const Block* b);
  // One-line text: "%3 : Tensor = aten::relu(%x.1)".
  std::string str() const;
  // "#7 aten::relu (%3)": compact description used in error messages.
  std::string describe() const;

 private:
  friend class Block;
  friend class Graph;
  friend class Value;
  Node() = default;
  std::string kind_;
  std::string key_;
  const c10::FunctionSchema* schema_ = nullptr;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::vector<std::unique_ptr<Block>> blocks_;
  std::unique_ptr<Graph> subgraph_;
  Block* block_ = nullptr;
  Graph* graph_ = nullptr;
  uint32_t index_ = 0;
  std::unordered_map<std::string, c10::IValue> attrs_;
  FrontendFacts frontend_;
  int reusable_input_ = -1;
};

struct NodeSpec {
  std::string kind;
  std::string overload;  // "" when none
  const c10::FunctionSchema* schema = nullptr;
  std::vector<Value*> inputs;
  std::vector<std::pair<c10::TypePtr, std::string>> outputs;  // type, debug name
  FrontendFacts frontend;
};

class Block {
 public:
  const std::vector<Value*>& params() const { return params_; }
  const std::vector<Node*>& nodes() const { return nodes_; }
  const std::vector<Value*>& returns() const { return returns_; }
  Node* owningNode() const { return owner_; }  // null for the graph's top block
  Graph* graph() const { return graph_; }

  Value* addParam(c10::TypePtr type, std::string name = "");
  Node* appendNode(NodeSpec spec);
  void addReturn(Value* v);

  // Rewriting, for graph passes (graph_edit.cc); call Graph::finalize() afterwards.
  // A new node placed just before `before` (a node of this block), so it may read what
  // `before` reads and `before` may read its outputs.
  Node* insertNodeBefore(Node* before, NodeSpec spec);
  void replaceReturn(size_t i, Value* v);
  // Takes `n` out of this block. Nothing may read its outputs any more (throws
  // brisk::Error otherwise); they keep their ids, so slots stay dense.
  void eraseNode(Node* n);
  // The same for a set of this block's nodes at once (one scan of the graph), which may
  // read each other's outputs.
  void eraseNodes(const std::unordered_set<Node*>& nodes);
  // Moves `group` (nodes of this block, without blocks of their own) into the one block
  // of a new node of kind `kind` (graph_wrap.cc), for the delegate partitioner. The new
  // node reads the group's non-constant inputs from outside, in first-read order; its
  // outputs are the group's values that anything outside it reads, and every such read
  // now reads the new node's output instead. The nested block returns the group's values
  // and reads outer values and constants directly. Nodes between the group's members
  // that depend on the group move after the new node; the others stay before it.
  // Throws brisk::Error when the group is empty, has a node of another block or one with
  // blocks, or is not convex (a path leaves the group and comes back).
  Node* wrapNodes(const std::vector<Node*>& group, const std::string& kind);
  // Why `group` cannot be wrapped (the checks of wrapNodes), or "" when it can.
  std::string wrapProblem(const std::vector<Node*>& group) const;

 private:
  friend class Graph;
  friend class Node;
  friend class Value;
  Block(Graph* g, Node* owner) : graph_(g), owner_(owner) {}
  // Forgets every read `n` performs, in its blocks too: it is leaving the graph.
  static void forgetReads(Node* n);
  Graph* graph_;
  Node* owner_;
  std::vector<Value*> params_;
  std::vector<Node*> nodes_;
  std::vector<Value*> returns_;
};

class Graph {
 public:
  explicit Graph(std::string name = "graph");
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& name() const { return name_; }
  Block* top() const { return top_.get(); }
  const std::vector<Value*>& inputs() const { return top_->params(); }
  const std::vector<Value*>& outputs() const { return top_->returns(); }
  Value* addConstant(c10::IValue value, c10::TypePtr type);
  const std::vector<Value*>& constants() const { return constants_; }

  uint32_t numValues() const { return static_cast<uint32_t>(values_.size()); }
  Value* value(uint32_t id) const { return values_.at(id).get(); }
  // Nodes in blocks (erased ones not counted).
  uint32_t numNodes() const { return static_cast<uint32_t>(nodes_.size() - erased_nodes_); }
  // All nodes in pre-order (a node before the nodes of its sub-blocks).
  const std::vector<Node*>& allNodes() const { return all_nodes_; }
  // Every block of the graph's tree, outer blocks before the blocks they contain (not
  // fork subgraphs: those are other Graphs). Walks the graph; call once per pass.
  std::vector<Block*> allBlocks() const;

  // What a folded constant was computed from, kept only where the folded value loses
  // something a backend can use: PT2E's dequantize of an integer weight folds to a float
  // weight, and an int8 kernel wants the integers and scales back (addFoldedConstant,
  // constant_eval.h).
  struct FoldedFrom {
    std::string op;                 // the folded node's key
    std::vector<c10::IValue> args;  // its constant inputs, in schema order
  };
  void setFoldedFrom(const Value* v, FoldedFrom from) { folded_from_[v] = std::move(from); }
  // Null for a value that was not recorded.
  const FoldedFrom* foldedFrom(const Value* v) const {
    auto it = folded_from_.find(v);
    return it == folded_from_.end() ? nullptr : &it->second;
  }

  // Nodes a frontend computed at load instead of adding (constant folding), for stats.
  size_t foldedNodes() const { return folded_nodes_; }
  void addFoldedNode() { ++folded_nodes_; }

  // Every read of `from` (node inputs and block returns, in every block) reads `to`
  // instead; returns how many reads changed (graph_edit.cc).
  size_t replaceAllUses(Value* from, Value* to);

  // Renumbers nodes in pre-order; call after construction or rewriting is complete.
  void finalize();
  // Multi-line text in a TorchScript-like syntax.
  std::string str() const;

 private:
  friend class Block;
  friend class Node;
  Value* newValue(c10::TypePtr type, std::string name);
  Node* newNode();

  std::string name_;
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Node*> all_nodes_;
  std::vector<Value*> constants_;
  std::unique_ptr<Block> top_;
  size_t folded_nodes_ = 0;
  size_t erased_nodes_ = 0;
  std::unordered_map<const Value*, FoldedFrom> folded_from_;
};

}  // namespace brisk
