#include "core/frontend/torchscript/torchscript.h"

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/frontend/error_report.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/ir/irparser.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/lower_tuples.h>
#include <torch/csrc/jit/passes/remove_mutation.h>
#include <torch/csrc/jit/serialization/import.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <unordered_map>

#include "core/frontend/archive_check.h"
#include "core/frontend/tensor_bounds.h"
#include "core/common/error.h"
#include "core/frontend/torchscript/fold_attributes.h"
#include "core/graph/fallback_op.h"
#include "core/graph/graph.h"
#include "core/common/options.h"

namespace brisk {
namespace {

namespace jit = torch::jit;

// "%y.1 = aten::relu" for messages about a JIT node before it has a brisk twin.
std::string header(const jit::Node* n) {
  std::string out;
  for (const jit::Value* o : n->outputs()) out += (out.empty() ? "%" : ", %") + o->debugName();
  return out + (out.empty() ? "" : " = ") + n->kind().toQualString();
}

// Converts a JIT graph (and, recursively, its blocks and fork subgraphs) to brisk's IR.
// The fallback kernel's way to the JIT's operator for a node (graph.h's FallbackSource).
class JitFallback final : public FallbackSource {
 public:
  explicit JitFallback(jit::Node* node) : node_(node) {}
  std::optional<FallbackOp> operation() const override {
    const jit::Operator* op = node_->maybeOperator();
    if (!op) return std::nullopt;
    return FallbackOp{op->getOperation(node_), &op->schema()};
  }

 private:
  jit::Node* node_;  // owned by the JIT graph the module keeps alive
};

class Converter {
 public:
  Converter(const std::string& model, Graph& out) : model_(model), g_(out) {}

  void convertBlock(const jit::Block* jb, Block* b, size_t skip_params = 0) {
    for (size_t i = skip_params; i < jb->inputs().size(); ++i) {
      const jit::Value* p = jb->inputs()[i];
      map_[p] = b->addParam(p->type(), name(p));
    }
    for (const jit::Node* jn : jb->nodes()) convertNode(const_cast<jit::Node*>(jn), b);
    for (const jit::Value* r : jb->outputs()) b->addReturn(lookup(r, nullptr));
  }

 private:
  static std::string name(const jit::Value* v) { return v->hasDebugName() ? v->debugNameBase() : ""; }

  Value* lookup(const jit::Value* v, const jit::Node* user) {
    auto it = map_.find(v);
    if (it == map_.end())
      throw Error(Error::Where{model_, user ? header(user) : "", ""},
                  "value %" + v->debugName() + " is used before it is defined");
    return it->second;
  }

  // What the rest of brisk needs of the JIT node, so that nothing past the frontend
  // reads TorchScript's IR (the node itself stays alive in the keepalive graph).
  static FrontendFacts frontendFacts(jit::Node* jn) {
    FrontendFacts f;
    f.effectful = jn->hasSideEffects() || jn->isNondeterministic();
    const jit::SourceRange& range = jn->sourceRange();
    if (auto src = range.source(); src && src->filename())
      f.source = SourceLocation{*src->filename(),
                                static_cast<uint32_t>(src->starting_line_no() + src->lineno_for_offset(range.start()))};
    f.fallback = std::make_shared<JitFallback>(jn);
    return f;
  }

  void convertNode(jit::Node* jn, Block* b) {
    if (jn->kind() == c10::prim::Constant) {
      auto iv = jit::toIValue(jn->output());
      if (!iv)
        throw Error(Error::Where{model_, header(jn), "prim::Constant"},
                    "constant of type " + jn->output()->type()->annotation_str() + " is not supported");
      map_[jn->output()] = g_.addConstant(std::move(*iv), jn->output()->type());
      return;
    }
    if (jn->kind() == c10::prim::GetAttr || jn->kind() == c10::prim::SetAttr)
      throw Error(Error::Where{model_, header(jn), jn->kind().toQualString()},
                  "module attribute access survived freezing (a mutated attribute?); brisk runs frozen "
                  "modules only");
    NodeSpec spec;
    spec.kind = jn->kind().toQualString();
    if (const jit::Operator* op = jn->maybeOperator()) {
      spec.schema = &op->schema();
      spec.overload = op->schema().overload_name();
    }
    for (const jit::Value* in : jn->inputs()) spec.inputs.push_back(lookup(in, jn));
    for (const jit::Value* out : jn->outputs()) spec.outputs.emplace_back(out->type(), name(out));
    spec.frontend = frontendFacts(jn);
    Node* n = b->appendNode(std::move(spec));
    for (size_t i = 0; i < jn->outputs().size(); ++i) map_[jn->outputs()[i]] = n->output(i);
    for (const jit::Block* sb : jn->blocks()) convertBlock(sb, n->addBlock());
    if (jn->kind() == c10::prim::fork) {
      auto sub = jn->g(c10::attr::Subgraph);
      auto child = std::make_unique<Graph>(g_.name() + "/fork#" + std::to_string(b->nodes().size() - 1));
      Converter(model_, *child).convertBlock(sub->block(), child->top());
      child->finalize();
      n->setSubgraph(std::move(child));
    }
  }

  const std::string& model_;
  Graph& g_;
  std::unordered_map<const jit::Value*, Value*> map_;
};

// The JIT clean-up passes run on every graph before conversion (after freezing, for
// files): the same family Static Runtime prepares its graphs with.
void cleanUp(std::shared_ptr<jit::Graph>& graph) {
  jit::Inline(*graph);
  jit::LowerSimpleTuples(graph);
  jit::ConstantPropagation(graph);
  // In-place ops become functional where alias analysis proves it safe, so more nodes
  // get out-variant kernels.
  jit::RemoveTensorMutation(graph);
  jit::ConstantPropagation(graph);
  jit::EliminateDeadCode(graph);
}

std::shared_ptr<Graph> convert(const std::string& model, const std::shared_ptr<jit::Graph>& jg,
                               size_t skip_params) {
  auto g = std::make_shared<Graph>(model);
  Converter(model, *g).convertBlock(jg->block(), g->top(), skip_params);
  g->finalize();
  return g;
}

void checkReadable(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(Error::Where{path, "", ""}, std::string("cannot open file: ") + std::strerror(errno));
}

// Why `path` does not load, from a second load that skips its .debug_pkl records.
std::string reloadWithoutDebugInfo(const std::string& path) {
  try {
    jit::load(path, std::nullopt, /*load_debug_files=*/false);
  } catch (const std::exception& e) {
    return describeException(e);
  }
  return "its debug records (.debug_pkl) are damaged";
}

struct JitKeepalive {
  jit::Module module;
  std::shared_ptr<jit::Graph> graph;
};

// Parameters first, then buffers, each in the module's own order.
std::vector<std::pair<std::string, at::Tensor>> namedTensors(const jit::Module& m) {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& p : m.named_parameters(/*recurse=*/true)) out.emplace_back(p.name, p.value);
  for (const auto& b : m.named_buffers(/*recurse=*/true)) out.emplace_back(b.name, b.value);
  return out;
}

// In place, into the freshly loaded module's own tensor: every alias of it sees the new
// values (scripted nn.LSTM reads its weights through `_flat_weights`, a list of the
// same tensors; tied weights share one tensor).
void replaceWeights(jit::Module& m, const WeightMap& replacements) {
  at::NoGradGuard no_grad;
  for (auto& [name, t] : namedTensors(m))
    if (auto it = replacements.find(name); it != replacements.end()) t.copy_(it->second);
}

jit::Module loadJitModule(const std::string& path) {
  checkReadable(path);
  checkArchivePickles(path);  // before torch's Unpickler recurses on them
  jit::Module module;
  try {
    module = jit::load(path);
  } catch (const jit::ErrorReport&) {
    // Never read this report: its noexcept what() unpickles the archive's .debug_pkl
    // records lazily, and a damaged one is std::terminate (found by the fuzzer). The same
    // load without debug records fails with a report that is safe to read.
    throw Error(Error::Where{path, "", ""},
                "not a loadable TorchScript archive (torch.jit.save output expected): " + reloadWithoutDebugInfo(path));
  } catch (const std::exception& e) {
    throw Error(Error::Where{path, "", ""},
                "not a loadable TorchScript archive (torch.jit.save output expected): " +
                    describeException(e));
  }
  // Before freezing, whose passes are the first to read the tensors' data.
  try {
    checkLoadedTensors(module, path);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(Error::Where{path, "", ""}, "cannot check the archive's tensors: " + describeException(e));
  }
  return module;
}

}  // namespace

WeightMap readTorchScriptWeights(const std::string& path) {
  WeightMap out;
  for (auto& [name, t] : namedTensors(loadJitModule(path))) out.emplace(name, t);
  return out;
}

FrontendResult loadTorchScript(const std::string& path, const Options& options) {
  return loadTorchScript(path, options, WeightMap{});
}

FrontendResult loadTorchScript(const std::string& path, const Options& options, const WeightMap& replacements) {
  // A program name is meaningful only in a PT2 archive; ignoring it would hide a mistake
  // (the wrong file, or the option meant for another model).
  if (!options.pt2_program.empty())
    throw Error(Error::Where{path, "", ""}, "pt2_program '" + options.pt2_program +
                                                "' names a program of a PT2 archive, but this is a TorchScript file "
                                                "(it has one program, forward; leave pt2_program empty)");
  auto keep = std::make_shared<JitKeepalive>();
  keep->module = loadJitModule(path);
  std::vector<WeightInfo> weights;
  for (const auto& [name, t] : namedTensors(keep->module))
    weights.push_back(WeightInfo{name, t.sizes().vec(), t.scalar_type()});
  try {
    checkReplacements(weights, replacements, path);
    replaceWeights(keep->module, replacements);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(Error::Where{path, "", ""}, "cannot replace the weights: " + describeException(e));
  }
  if (!keep->module.find_method("forward"))
    throw Error(Error::Where{path, "", ""}, "the TorchScript module has no forward method");
  try {
    keep->module.eval();
    keep->module = jit::freeze(keep->module, c10::nullopt, options.optimize_numerics);
  } catch (const std::exception& e) {
    throw Error(Error::Where{path, "", ""}, "freezing failed: " + describeException(e));
  }
  jit::Method forward = keep->module.get_method("forward");
  const c10::FunctionSchema& schema = forward.function().getSchema();
  keep->graph = forward.graph();
  std::shared_ptr<jit::Graph>& jg = keep->graph;
  try {
    foldRemainingAttributes(keep->module, jg);
    cleanUp(jg);
  } catch (const std::exception& e) {
    throw Error(Error::Where{path, "", ""}, "graph clean-up failed: " + describeException(e));
  }

  // Freezing leaves `self` as the first input; nothing may use it any more.
  size_t skip = 0;
  if (!jg->inputs().empty() && jg->inputs()[0]->type()->cast<c10::ClassType>()) {
    if (jg->inputs()[0]->hasUses())
      throw Error(Error::Where{path, "", ""}, "the frozen graph still uses `self`; cannot run it");
    skip = 1;
  }
  std::vector<Argument> args;
  for (size_t i = skip; i < schema.arguments().size(); ++i) {
    const auto& a = schema.arguments()[i];
    std::optional<c10::IValue> def;
    if (a.default_value()) def = *a.default_value();
    // The graph's input types can be more precise (traced models carry dtype/rank).
    c10::TypePtr type = i < jg->inputs().size() ? jg->inputs()[i]->type() : a.type();
    args.push_back(Argument{a.name(), type, def});
  }
  FrontendResult r{convert(path, jg, skip), Signature(path, std::move(args)), nullptr};
  r.keepalive = keep;
  r.weights = std::move(weights);
  return r;
}

FrontendResult parseTorchScriptIR(const std::string& ir, const std::string& name) {
  auto jg = std::make_shared<jit::Graph>();
  try {
    jit::parseIR(ir, jg.get());
    cleanUp(jg);
  } catch (const std::exception& e) {
    throw Error(Error::Where{name, "", ""}, "cannot parse TorchScript IR: " + describeException(e));
  }
  std::vector<Argument> args;
  for (size_t i = 0; i < jg->inputs().size(); ++i) {
    const jit::Value* v = jg->inputs()[i];
    args.push_back(Argument{v->hasDebugName() ? v->debugNameBase() : "arg" + std::to_string(i), v->type(),
                            std::nullopt});
  }
  FrontendResult r{convert(name, jg, 0), Signature(name, std::move(args)), nullptr};
  r.keepalive = jg;
  return r;
}

}  // namespace brisk
