#include "core/graph/graph_verifier.h"

#include <ATen/core/function_schema.h>

#include <algorithm>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "core/common/error.h"
#include "core/graph/graph.h"

namespace brisk {
namespace {

class Verifier {
 public:
  explicit Verifier(const Graph& g) : g_(g) {}

  std::vector<std::string> run() {
    for (uint32_t i = 0; i < g_.numValues(); ++i)
      if (g_.value(i)->id() != i) problem("value id " + std::to_string(g_.value(i)->id()) + " at slot " + std::to_string(i));
    for (const Value* c : g_.constants()) defined_.insert(c);
    verifyBlock(*g_.top());
    checkUses();
    return std::move(problems_);
  }

 private:
  void problem(std::string p) { problems_.push_back(std::move(p)); }

  void use(const Value* v, const std::string& where) {
    if (!defined_.count(v)) problem(where + " uses " + v->ref() + " before it is defined");
  }

  void verifyBlock(const Block& b) {
    std::vector<const Value*> scope;  // values defined in this block, undefined on exit
    for (const Value* p : b.params()) {
      defined_.insert(p);
      scope.push_back(p);
    }
    for (const Node* n : b.nodes()) {
      const std::string where = "node " + n->describe();
      for (const Value* v : n->inputs()) use(v, where);
      for (size_t i = 0; i < n->inputs().size(); ++i)
        reads_[n->input(i)].push_back({const_cast<Node*>(n), nullptr, static_cast<uint32_t>(i)});
      checkTypes(*n, where);
      checkBlocks(*n, where);
      for (const auto& sub : n->blocks()) verifyBlock(*sub);
      if (n->subgraph()) {
        for (const auto& p : verifyGraph(*n->subgraph())) problem(where + " subgraph: " + p);
      }
      for (const Value* o : n->outputs()) {
        if (o->producer() != n) problem(where + " output " + o->ref() + " has another producer");
        defined_.insert(o);
        scope.push_back(o);
      }
    }
    for (const Value* r : b.returns()) use(r, "block return");
    for (size_t i = 0; i < b.returns().size(); ++i)
      reads_[b.returns()[i]].push_back({nullptr, const_cast<Block*>(&b), static_cast<uint32_t>(i)});
    for (const Value* v : scope) defined_.erase(v);
  }

  // Every value's use list (Value::uses) names exactly the reads the walk found.
  void checkUses() {
    auto key = [](const Use& u) { return std::tuple(u.user, u.block, u.index); };
    for (uint32_t i = 0; i < g_.numValues(); ++i) {
      const Value* v = g_.value(i);
      std::vector<Use> want = reads_.count(v) ? reads_.at(v) : std::vector<Use>{};
      std::vector<Use> have = v->uses();
      auto less = [&](const Use& a, const Use& b) { return key(a) < key(b); };
      std::sort(want.begin(), want.end(), less);
      std::sort(have.begin(), have.end(), less);
      if (want != have)
        problem(v->ref() + " lists " + std::to_string(have.size()) + " uses but is read " +
                std::to_string(want.size()) + " times");
    }
  }

  void checkBlocks(const Node& n, const std::string& where) {
    if (n.kind() == "prim::If") {
      if (n.blocks().size() != 2) return problem(where + ": prim::If needs 2 blocks");
      for (const auto& b : n.blocks())
        if (b->returns().size() != n.outputs().size())
          problem(where + ": prim::If block returns " + std::to_string(b->returns().size()) +
                  " values for " + std::to_string(n.outputs().size()) + " outputs");
    } else if (n.kind() == "prim::Loop") {
      if (n.blocks().size() != 1) return problem(where + ": prim::Loop needs 1 block");
      const Block& body = *n.block(0);
      const size_t carried = n.outputs().size();
      if (n.inputs().size() != carried + 2 || body.params().size() != carried + 1 ||
          body.returns().size() != carried + 1)
        problem(where + ": prim::Loop arity mismatch between inputs, body and outputs");
    } else if (n.kind() == "prim::fork" && !n.subgraph()) {
      problem(where + ": prim::fork without a subgraph");
    }
  }

  void checkTypes(const Node& n, const std::string& where) {
    const c10::FunctionSchema* s = n.schema();
    if (!s || s->is_vararg()) return;
    if (s->arguments().size() != n.inputs().size()) {
      problem(where + ": " + std::to_string(n.inputs().size()) + " inputs for schema " + toString(*s));
      return;
    }
    for (size_t i = 0; i < n.inputs().size(); ++i) {
      const c10::TypePtr& want = s->arguments()[i].type();
      const c10::TypePtr& have = n.input(i)->type();
      if (!have || !want || want->hasFreeVariables() || want->kind() == c10::TypeKind::AnyType) continue;
      if (!have->isSubtypeOf(*want))
        problem(where + ": input " + std::to_string(i) + " (" + s->arguments()[i].name() + ") is " +
                have->annotation_str() + ", schema wants " + want->annotation_str());
    }
  }

  const Graph& g_;
  std::unordered_set<const Value*> defined_;
  std::unordered_map<const Value*, std::vector<Use>> reads_;
  std::vector<std::string> problems_;
};

}  // namespace

std::vector<std::string> verifyGraph(const Graph& graph) { return Verifier(graph).run(); }

void checkGraph(const Graph& graph) {
  auto problems = verifyGraph(graph);
  if (problems.empty()) return;
  std::string msg = "graph verification failed: ";
  for (size_t i = 0; i < problems.size() && i < 5; ++i) msg += (i ? "; " : "") + problems[i];
  if (problems.size() > 5) msg += "; and " + std::to_string(problems.size() - 5) + " more";
  throw Error(Error::Where{graph.name(), "", ""}, msg);
}

}  // namespace brisk
