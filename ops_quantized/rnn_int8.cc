// int8_dynamic LSTM / GRU layers; see rnn_int8.h.
#include "ops_quantized/rnn_int8.h"

#include <ATen/ATen.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ops_cpu/native/rnn_call.h"
#include "ops_cpu/native/rnn_node.h"
#include "ops_cpu/simd/rnn_sequence.h"
#include "ops_quantized/int8_gemm.h"

namespace brisk::ops_quantized {
namespace {

using ops_cpu::rnn::RnnNode;

Int8Linear int8Linear(const at::Tensor& w, const at::Tensor& bias) {
  const at::Tensor wc = w.contiguous();
  const at::Tensor bc = bias.defined() ? bias.contiguous() : bias;
  return Int8Linear(wc.data_ptr<float>(), wc.size(0), wc.size(1), bc.defined() ? bc.data_ptr<float>() : nullptr);
}

// Whether every projection of the layer stack has an inner size the int32 sums take.
bool fitsInt8(const RnnNode& r) {
  return r.input <= Int8Linear::kMaxK && r.dirs * r.hidden <= Int8Linear::kMaxK;
}

class Int8Rnn {
 public:
  explicit Int8Rnn(RnnNode node) : node_(std::move(node)) {
    const RnnNode& r = node_;
    for (int64_t l = 0; l < r.layers; ++l) {
      std::vector<at::Tensor> w_ih, b_ih;
      for (int64_t d = 0; d < r.dirs; ++d) {
        const at::Tensor* p = r.weights(l, d);
        w_ih.push_back(p[0]);
        if (r.has_biases) b_ih.push_back(p[2]);
        hh_.push_back(int8Linear(p[1], r.has_biases ? p[3] : at::Tensor()));
      }
      // Both directions' input projections stacked: one pass over the sequence.
      ih_.push_back(int8Linear(at::cat(w_ih, 0), r.has_biases ? at::cat(b_ih, 0) : at::Tensor()));
    }
  }

  std::string describe() const {
    return std::string(node_.lstm ? "int8 dynamic LSTM" : "int8 dynamic GRU") +
           ": per-channel int8 W_ih and W_hh packed at load, rows quantized to uint8 per call, " +
           (Int8Linear::hasVnni() ? "AVX-512 VNNI" : "portable") + " int32 GEMM, fp32 gates";
  }

  void run(KernelContext& ctx) const {
    const std::optional<ops_cpu::rnn::RnnCall> call =
        ops_cpu::rnn::rnnCall(ctx, node_, [](int64_t, int64_t) { return true; });
    if (!call) return ops_cpu::rnn::runAtenRnn(ctx, node_);
    const ops_cpu::out::RnnShape& s = call->shape;
    // Scratch, per thread and grown once: the loop's floats, and the quantized rows of
    // the largest projection (the input projection of the whole sequence).
    static thread_local std::vector<float> floats;
    static thread_local std::vector<uint8_t> bytes;
    if (floats.size() < static_cast<size_t>(s.scratchFloats())) floats.resize(s.scratchFloats());
    size_t need = 0;
    for (const Int8Linear& p : ih_) need = std::max(need, p.scratchBytes(s.steps * s.batch));
    for (const Int8Linear& p : hh_) need = std::max(need, p.scratchBytes(s.batch));
    if (bytes.size() < need) bytes.resize(need);
    uint8_t* q = bytes.data();
    const int64_t dirs = node_.dirs;
    ops_cpu::out::runRnnSequence(
        s, call->io, floats.data(),
        [&](int64_t l, const float* in, int64_t rows, float* o) { ih_[l].run(in, rows, o, q); },
        [&](int64_t l, int64_t d, const float* h, int64_t rows, float* o) { hh_[l * dirs + d].run(h, rows, o, q); });
  }

 private:
  RnnNode node_;
  std::vector<Int8Linear> ih_;  // per layer
  std::vector<Int8Linear> hh_;  // per layer and direction
};

std::unique_ptr<Kernel> makeInt8Rnn(KernelBuildContext& b, bool lstm) {
  std::optional<RnnNode> node = ops_cpu::rnn::readRnnNode(b.node(), lstm);
  // The rewrite checked the same; a node edited since keeps ATen's fp32 layer.
  if (!node || !fitsInt8(*node)) return nullptr;
  auto rnn = std::make_shared<Int8Rnn>(std::move(*node));
  return functionKernel(
      KernelKind::kOutVariant, [rnn](KernelContext& ctx) { rnn->run(ctx); }, rnn->describe());
}

}  // namespace

size_t rewriteRnnsInt8(Graph& g, Block& block) {
  size_t changed = 0;
  const std::vector<Node*> nodes = block.nodes();
  for (Node* n : nodes) {
    const bool lstm = n->key() == "aten::lstm.input";
    if (!lstm && n->key() != "aten::gru.input") continue;
    const std::optional<RnnNode> r = ops_cpu::rnn::readRnnNode(*n, lstm);
    if (!r || !fitsInt8(*r)) continue;
    NodeSpec spec;
    spec.kind = lstm ? kLstmInt8Kind : kGruInt8Kind;
    spec.schema = n->schema();  // the same arguments and results as aten's
    spec.inputs = n->inputs();
    for (const Value* o : n->outputs()) spec.outputs.emplace_back(o->type(), o->name());
    Node* q = block.insertNodeBefore(n, std::move(spec));
    for (size_t i = 0; i < n->outputs().size(); ++i) g.replaceAllUses(n->output(i), q->output(i));
    block.eraseNode(n);
    ++changed;
  }
  return changed;
}

void registerRnnInt8Kernels(PluginRegistrar& r) {
  r.outVariant(kLstmInt8Kind, [](KernelBuildContext& b) { return makeInt8Rnn(b, true); });
  r.outVariant(kGruInt8Kind, [](KernelBuildContext& b) { return makeInt8Rnn(b, false); });
}

}  // namespace brisk::ops_quantized
