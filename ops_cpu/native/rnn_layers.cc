// brisk's LSTM / GRU layers; see rnn_layers.h.
#include "ops_cpu/native/rnn_layers.h"

#include <ATen/ATen.h>

#include <climits>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ops_cpu/fused/rnn_frozen_linear.h"
#include "ops_cpu/native/rnn_call.h"
#include "ops_cpu/native/rnn_node.h"
#include "ops_cpu/out_variant/common.h"
#include "ops_cpu/out_variant/linear_gemm.h"

namespace brisk::ops_cpu::native {
namespace {

// A layer's weights as given ([n, k], maybe not contiguous) for FrozenLinear, whose
// BLAS path wants them contiguous.
FrozenLinear frozen(const at::Tensor& w, const at::Tensor& bias, bool small_gemm) {
  return FrozenLinear(w.contiguous(), bias.defined() ? bias.contiguous() : bias, small_gemm);
}

// One layer: the input projection of both directions stacked ([D * G * H] outputs per
// row, direction d at d * G * H), and each direction's recurrent weight.
struct Layer {
  FrozenLinear ih;
  std::vector<FrozenLinear> hh;
};

class BriskRnn {
 public:
  BriskRnn(rnn::RnnNode node, bool small_gemm) : node_(std::move(node)) {
    const rnn::RnnNode& r = node_;
    for (int64_t l = 0; l < r.layers; ++l) {
      std::vector<at::Tensor> w_ih, b_ih;
      std::vector<FrozenLinear> hh;
      for (int64_t d = 0; d < r.dirs; ++d) {
        const at::Tensor* p = r.weights(l, d);
        w_ih.push_back(p[0]);
        if (r.has_biases) b_ih.push_back(p[2]);
        hh.push_back(frozen(p[1], r.has_biases ? p[3] : at::Tensor(), small_gemm));
      }
      layers_w_.push_back(Layer{frozen(at::cat(w_ih, 0), r.has_biases ? at::cat(b_ih, 0) : at::Tensor(), small_gemm),
                                std::move(hh)});
    }
  }

  // Whether every GEMM has a path without ATen for `seq_rows` steps x batch rows of
  // input projection and `batch` rows per step.
  bool gemmsServe(int64_t seq_rows, int64_t batch) const {
    for (const Layer& l : layers_w_) {
      if (!l.ih.serves(seq_rows)) return false;
      for (const FrozenLinear& g : l.hh)
        if (!g.serves(batch)) return false;
    }
    return true;
  }

  std::string describe() const {
    std::string s = node_.lstm ? "brisk LSTM" : "brisk GRU";
    s += ": input projection of all steps in one GEMM, per step ";
    s += layers_w_[0].hh[0].packed() ? std::string("small_gemm (") + out::smallGemmRowsText() + ") / sgemm_"
                                   : std::string("sgemm_");
    s += " on the frozen W_hh and one loop over the gates";
    return s;
  }

  void run(KernelContext& ctx) const {
    const std::optional<rnn::RnnCall> call =
        rnn::rnnCall(ctx, node_, [this](int64_t rows, int64_t batch) { return gemmsServe(rows, batch); });
    if (!call) return rnn::runAtenRnn(ctx, node_);
    // Scratch, per thread and grown once.
    static thread_local std::vector<float> scratch;
    if (scratch.size() < static_cast<size_t>(call->shape.scratchFloats())) scratch.resize(call->shape.scratchFloats());
    out::runRnnSequence(
        call->shape, call->io, scratch.data(),
        [&](int64_t l, const float* in, int64_t rows, float* o) { layers_w_[l].ih.run(in, rows, o); },
        [&](int64_t l, int64_t d, const float* h, int64_t rows, float* o) { layers_w_[l].hh[d].run(h, rows, o); });
  }

 private:
  rnn::RnnNode node_;
  std::vector<Layer> layers_w_;
};

std::unique_ptr<Kernel> makeBriskRnn(KernelBuildContext& b, bool lstm, bool small_gemm) {
  std::optional<rnn::RnnNode> node = rnn::readRnnNode(b.node(), lstm);
  if (!node) return nullptr;
  auto rnn = std::make_shared<BriskRnn>(std::move(*node), small_gemm);
  if (!rnn->gemmsServe(1, 1)) return nullptr;
  return out::makeKernel(rnn->describe(), [rnn](KernelContext& ctx) { rnn->run(ctx); });
}

}  // namespace

void registerBriskRnnKernels(PluginRegistrar& r) {
  const PluginOption<bool> small_gemm = out::declareSmallGemmOption(r);
  r.outVariant("aten::lstm.input",
               [small_gemm](KernelBuildContext& b) { return makeBriskRnn(b, true, b.pluginOption(small_gemm)); });
  r.outVariant("aten::gru.input",
               [small_gemm](KernelBuildContext& b) { return makeBriskRnn(b, false, b.pluginOption(small_gemm)); });
}

}  // namespace brisk::ops_cpu::native
