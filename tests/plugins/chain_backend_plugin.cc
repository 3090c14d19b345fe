// A delegate backend for the partitioner's tests: "test_chain" claims every maximal chain
// of aten::relu / aten::relu_ / aten::add.Tensor / aten::add_.Tensor nodes joined by values only the next node reads, and
// runs a claimed chain itself with ATen calls. It counts its compile and run calls
// (brisk_test_chain_counts, read by the tests through dlsym), and its plugin options make
// it misbehave on purpose: test_chain.fail_compile (compile throws), test_chain.decline
// (compile returns null), test_chain.decline_runs (run serves nothing), test_chain.claim_all
// (claims every node of a block as one group, effects and all, so core must refuse it).
#include <ATen/ATen.h>

#include <atomic>
#include <unordered_map>
#include <unordered_set>

#include "core/graph/graph.h"
#include "core/kernels/delegate.h"
#include "core/kernels/plugin.h"

namespace {

std::atomic<int64_t> compiles{0}, runs{0};

// relu_ (in place) computes what relu does; core decides whether its write may join.
bool isRelu(const brisk::Node& n) { return (n.key() == "aten::relu" || n.key() == "aten::relu_") && n.inputs().size() == 1; }

bool chainOp(const brisk::Node& n) {
  return isRelu(n) || ((n.key() == "aten::add.Tensor" || n.key() == "aten::add_.Tensor") && n.inputs().size() == 3);
}

class ChainPartition final : public brisk::CompiledPartition {
 public:
  ChainPartition(const brisk::Node& node, bool decline_runs) : decline_runs_(decline_runs) {
    for (size_t i = 0; i < node.inputs().size(); ++i) slot_of_[node.input(i)] = static_cast<int>(i);
    for (const brisk::Node* n : node.block(0)->nodes()) steps_.push_back(n);
    for (const brisk::Value* r : node.block(0)->returns()) returns_.push_back(r);
  }
  bool run(brisk::KernelContext& ctx, brisk::KernelState*) const override {
    ++runs;
    if (decline_runs_) return false;
    std::unordered_map<const brisk::Value*, c10::IValue> vals;
    auto get = [&](const brisk::Value* v) -> c10::IValue {
      if (v->isConstant()) return v->constant();
      auto it = slot_of_.find(v);
      return it != slot_of_.end() ? ctx.input(it->second) : vals.at(v);
    };
    for (const brisk::Node* n : steps_) {
      if (isRelu(*n)) vals[n->output(0)] = at::relu(get(n->input(0)).toTensor());
      else vals[n->output(0)] = at::add(get(n->input(0)).toTensor(), get(n->input(1)).toTensor(), get(n->input(2)).toScalar());
    }
    for (size_t i = 0; i < returns_.size(); ++i) ctx.output(i) = get(returns_[i]);
    return true;
  }
  std::string describe() const override { return std::to_string(steps_.size()) + " relu/add nodes"; }

 private:
  bool decline_runs_;
  std::unordered_map<const brisk::Value*, int> slot_of_;
  std::vector<const brisk::Node*> steps_;
  std::vector<const brisk::Value*> returns_;
};

class ChainBackend final : public brisk::DelegateBackend {
 public:
  ChainBackend(brisk::PluginOption<bool> fail, brisk::PluginOption<bool> decline, brisk::PluginOption<bool> decline_runs,
               brisk::PluginOption<bool> claim_all)
      : fail_(fail), decline_(decline), decline_runs_(decline_runs), claim_all_(claim_all) {}

  std::vector<std::vector<const brisk::Node*>> claim(const brisk::Block& block,
                                                    const brisk::DelegateContext& ctx) const override {
    if (claim_all_.get(ctx.options)) {
      std::vector<const brisk::Node*> all(block.nodes().begin(), block.nodes().end());
      return {all};
    }
    std::unordered_set<const brisk::Node*> taken;
    std::vector<std::vector<const brisk::Node*>> groups;
    for (const brisk::Node* n : block.nodes()) {
      if (!chainOp(*n) || taken.count(n)) continue;
      std::vector<const brisk::Node*> g{n};
      for (const brisk::Node* cur = n;;) {
        // The next link reads the value once and nothing else does (no block return).
        const brisk::Node* next = cur->output(0)->soleUser();
        if (next && next->owningBlock() != &block) next = nullptr;
        if (!next || !chainOp(*next) || taken.count(next)) break;
        g.push_back(next);
        cur = next;
      }
      taken.insert(g.begin(), g.end());
      groups.push_back(g);
    }
    return groups;
  }

  std::unique_ptr<brisk::CompiledPartition> compile(const brisk::Partition& p,
                                                    const brisk::DelegateContext& ctx) const override {
    ++compiles;
    if (fail_.get(ctx.options)) throw std::runtime_error("test_chain: compile failed on purpose");
    if (decline_.get(ctx.options)) return nullptr;
    return std::make_unique<ChainPartition>(p.node, decline_runs_.get(ctx.options));
  }

 private:
  brisk::PluginOption<bool> fail_, decline_, decline_runs_, claim_all_;
};

}  // namespace

extern "C" __attribute__((visibility("default"))) void brisk_test_chain_counts(int64_t* c, int64_t* r) {
  *c = compiles.load();
  *r = runs.load();
}

BRISK_PLUGIN(registrar) {
  auto fail = registrar.option<bool>("fail_compile", false, "compile throws");
  auto decline = registrar.option<bool>("decline", false, "compile returns null");
  auto decline_runs = registrar.option<bool>("decline_runs", false, "run serves nothing");
  auto claim_all = registrar.option<bool>("claim_all", false, "claims whole blocks");
  registrar.delegate("test_chain", std::make_shared<ChainBackend>(fail, decline, decline_runs, claim_all));
}
