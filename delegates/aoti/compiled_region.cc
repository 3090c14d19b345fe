#include "delegates/aoti/compiled_region.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <unordered_set>

#include "core/common/error.h"
#include "core/graph/call_delegate.h"
#include "core/graph/graph.h"
#include "delegates/aoti/artifact.h"
#include "delegates/aoti/container.h"

namespace brisk::aoti {
namespace {

// AOTInductor's constant names carry the path of the module it compiled; NativeRT's
// lowering wraps the program as `original_module` (torch.nativert.backends), so a
// weight `fc.weight` is the constant whose original FQN is `original_module.fc.weight`.
std::string weightName(const std::string& fqn) {
  static const std::string kPrefix = "original_module.";
  return fqn.compare(0, kPrefix.size(), kPrefix) == 0 ? fqn.substr(kPrefix.size()) : fqn;
}

const Node& callOf(const Partition& p) {
  const Block& b = *p.node.block(0);
  if (b.nodes().size() != 1 || b.nodes()[0]->kind() != kCallDelegateKind)
    throw Error("the partition is not one call into a compiled region");
  return *b.nodes()[0];
}

template <typename T>
std::vector<T> listAttr(const Node& n, const char* name) {
  auto it = n.attributes().find(name);
  if (it == n.attributes().end()) throw Error(std::string("the call has no '") + name + "' attribute");
  return it->second.to<std::vector<T>>();
}

std::string sizesText(c10::IntArrayRef s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + (s[i] < 0 ? std::string("?") : std::to_string(s[i]));
  return out + "]";
}

struct RegionState final : KernelState {
  std::unique_ptr<Container> container;
  std::vector<at::Tensor> inputs;  // reused: capacity stays after the first call
};

}  // namespace

CompiledRegion::CompiledRegion(const Partition& p, std::shared_ptr<const Artifact> artifact)
    : artifact_(std::move(artifact)) {
  const Node& call = callOf(p);
  const int64_t count = call.attributes().at(kCallDelegateOperandsAttr).toInt();
  const std::vector<int64_t> dtypes = listAttr<int64_t>(call, kCallDelegateDtypesAttr);
  const std::vector<int64_t> ranks = listAttr<int64_t>(call, kCallDelegateRanksAttr);
  const std::vector<int64_t> dims = listAttr<int64_t>(call, kCallDelegateDimsAttr);
  const std::vector<std::string> weights = listAttr<std::string>(call, kCallDelegateWeightsAttr);
  if (count < 0 || static_cast<size_t>(count) + weights.size() != call.inputs().size() ||
      dtypes.size() != static_cast<size_t>(count) || ranks.size() != dtypes.size())
    throw Error("the call's operand attributes do not match its inputs");
  size_t dim = 0;
  for (int64_t i = 0; i < count; ++i) {
    const Value* v = call.input(i);
    Operand o;
    const auto& ins = p.node.inputs();
    if (auto it = std::find(ins.begin(), ins.end(), v); it != ins.end()) o.input = static_cast<int>(it - ins.begin());
    else if (v->isConstant() && v->constant().isTensor()) o.constant = v->constant().toTensor().contiguous();
    else throw Error("operand " + std::to_string(i) + " of the call is neither a partition input nor a tensor");
    o.dtype = static_cast<c10::ScalarType>(dtypes[i]);
    if (dim + ranks[i] > dims.size()) throw Error("the call's operand sizes are truncated");
    o.sizes.assign(dims.begin() + dim, dims.begin() + dim + ranks[i]);
    dim += ranks[i];
    operands_.push_back(std::move(o));
  }

  ensureLibtorchLoaded();
  // The library's own constants: their names, original FQNs and (not yet read) data.
  auto probe = std::make_shared<Container>(artifact_->library());
  const size_t inputs = probe->numInputs();
  outputs_ = probe->numOutputs();
  if (inputs != operands_.size() || outputs_ != call.outputs().size())
    throw Error("'" + artifact_->libraryRecord() + "' takes " + std::to_string(inputs) + " inputs and returns " +
                std::to_string(outputs_) + " outputs, but the delegate program calls it with " +
                std::to_string(operands_.size()) + " and reads " + std::to_string(call.outputs().size()) +
                ": the delegate program does not match the archive's files");
  std::unordered_map<std::string, const Value*> weight_of;
  for (size_t j = 0; j < weights.size(); ++j) weight_of[weights[j]] = call.input(count + j);
  const auto embedded = probe->extract_constants_map(false);
  std::unordered_set<std::string> read_in_place;
  for (const auto& [name, fqn] : probe->getConstantNamesToOriginalFQNs()) {
    auto lib = embedded.find(name);
    auto w = weight_of.find(weightName(fqn));
    if (w == weight_of.end()) {
      if (lib == embedded.end()) throw Error("the compiled region's constant '" + name + "' has no data");
      constants_[name] = lib->second;
      continue;
    }
    const at::Tensor& t = w->second->constant().toTensor();
    // A constant in another form than its weight (freezing packs linear and conv weights
    // into opaque blocked tensors) is AOTInductor's own copy, made when it compiled.
    const bool own_form = lib != embedded.end() &&
                          (!lib->second.has_storage() || lib->second.layout() != c10::kStrided ||
                           lib->second.sizes() != t.sizes() || lib->second.scalar_type() != t.scalar_type());
    if (own_form) {
      constants_[name] = lib->second;
      continue;
    }
    // In place when the layout agrees (a swapped-in weight may be another layout).
    constants_[name] = lib != embedded.end() && lib->second.strides() != t.strides() ? t.contiguous() : t;
    read_in_place.insert(w->first);
    ++from_weights_;
  }
  // AOTInductor's own constants may be folded from weights (freezing packs them, under
  // other names): a weight no constant reads in place may live on inside one, where a
  // new value cannot reach it.
  if (from_weights_ < constants_.size())
    for (const auto& [weight, v] : weight_of)
      if (!read_in_place.count(weight)) artifact_->checkFoldedWeight(weight, v->constant().toTensor());
  if (from_weights_ < constants_.size()) embedded_ = std::move(probe);  // it owns the others' bytes
  // One container now: it shows whether AOTInductor reads the weights in place.
  std::unique_ptr<Container> first = makeContainer();
  shares_weights_ = true;
  for (const auto& [name, t] : first->extract_constants_map(false))
    if (auto c = constants_.find(name); c != constants_.end() && t.has_storage() && c->second.has_storage() &&
                                        t.data_ptr() != c->second.data_ptr())
      shares_weights_ = false;
  spare_ = std::move(first);  // the first Runtime's: made at load, as AOTInductor's own loader does
}

CompiledRegion::~CompiledRegion() = default;

std::unique_ptr<Container> CompiledRegion::makeContainer() const {
  auto constants = constants_;  // the runner's constructor takes a mutable map
  return std::make_unique<Container>(artifact_->library(), constants);
}

std::unique_ptr<DelegateState> CompiledRegion::newState() const {
  auto s = std::make_unique<RegionState>();
  {
    std::lock_guard<std::mutex> lock(spare_mu_);  // once per Runtime, never per call
    s->container = std::move(spare_);
  }
  if (!s->container) s->container = makeContainer();
  s->inputs.reserve(operands_.size());
  return s;
}

void CompiledRegion::checkOperand(size_t i, const at::Tensor& t) const {
  const Operand& o = operands_[i];
  bool ok = t.scalar_type() == o.dtype && t.dim() == static_cast<int64_t>(o.sizes.size()) && t.device().is_cpu();
  for (size_t d = 0; ok && d < o.sizes.size(); ++d) ok = o.sizes[d] < 0 || o.sizes[d] == t.size(d);
  if (!ok)
    throw Error("input " + std::to_string(i) + " of the compiled region is " + c10::toString(t.scalar_type()) +
                sizesText(t.sizes()) + ", and AOTInductor compiled it for " + c10::toString(o.dtype) +
                sizesText(o.sizes));
}

bool CompiledRegion::run(KernelContext& ctx, DelegateState* state) const {
  auto& s = static_cast<RegionState&>(*state);
  s.inputs.clear();
  for (size_t i = 0; i < operands_.size(); ++i) {
    const Operand& o = operands_[i];
    const at::Tensor& t = o.input >= 0 ? ctx.tensor(o.input) : o.constant;
    checkOperand(i, t);
    // The compiled code assumes the strides it was traced with: dense, row-major.
    s.inputs.push_back(t.is_contiguous() ? t : t.contiguous());
  }
  std::vector<at::Tensor> out;
  try {
    out = s.container->run(s.inputs);
  } catch (const std::exception& e) {
    throw Error("AOTInductor's run of '" + artifact_->libraryRecord() + "' failed: " + describeException(e));
  }
  if (out.size() != outputs_) throw Error("the compiled region returned " + std::to_string(out.size()) + " outputs");
  for (size_t j = 0; j < out.size(); ++j) ctx.output(j) = std::move(out[j]);
  for (at::Tensor& t : s.inputs) t.reset();  // no hold on this call's inputs
  return true;
}

std::string CompiledRegion::describe() const {
  std::string s = "AOTInductor region '" + artifact_->region() + "' (" + artifact_->cpuIsa() + "), " +
                  std::to_string(from_weights_) + " of " + std::to_string(constants_.size()) +
                  " constants are brisk's weights";
  // The others are AOTInductor's: folded or packed when it compiled, from the library.
  s += shares_weights_ ? ", read in place" : ", copied by each container";
  return s + "; one container per Runtime";
}

}  // namespace brisk::aoti
