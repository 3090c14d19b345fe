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
#include "ops_cpu/native/common.h"
#include "ops_cpu/out_variant/common.h"
#include "ops_cpu/out_variant/linear_gemm.h"
#include "ops_cpu/simd/gru_gates.h"
#include "ops_cpu/simd/lstm_gates.h"

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

enum class Cell { kLstm, kGru };

bool plainFloat(const at::Tensor& t) {
  return t.defined() && t.scalar_type() == at::kFloat && out::isDenseCpu(t) && t.is_contiguous();
}

class BriskRnn {
 public:
  BriskRnn(Cell cell, std::vector<at::Tensor> params, bool has_biases, int64_t layers, double dropout,
           bool bidirectional, bool batch_first, bool small_gemm)
      : cell_(cell),
        gates_(cell == Cell::kLstm ? 4 : 3),
        layers_(layers),
        dirs_(bidirectional ? 2 : 1),
        has_biases_(has_biases),
        dropout_(dropout),
        batch_first_(batch_first),
        params_(std::move(params)) {
    const size_t per = has_biases ? 4 : 2;
    hidden_ = params_[1].size(1);
    input_ = params_[0].size(1);
    for (int64_t l = 0; l < layers; ++l) {
      std::vector<at::Tensor> w_ih, b_ih;
      std::vector<FrozenLinear> hh;
      for (int64_t d = 0; d < dirs_; ++d) {
        const at::Tensor* p = &params_[(l * dirs_ + d) * per];
        w_ih.push_back(p[0]);
        if (has_biases) b_ih.push_back(p[2]);
        hh.push_back(frozen(p[1], has_biases ? p[3] : at::Tensor(), small_gemm));
      }
      layers_w_.push_back(Layer{frozen(at::cat(w_ih, 0), has_biases ? at::cat(b_ih, 0) : at::Tensor(), small_gemm),
                                std::move(hh)});
    }
  }

  // Whether the shapes of `params` are those of this layer stack (checked at load).
  static bool shapesFit(const std::vector<at::Tensor>& p, int64_t gates, int64_t layers, int64_t dirs,
                        bool has_biases) {
    const size_t per = has_biases ? 4 : 2;
    if (layers < 1 || p.size() != per * layers * dirs) return false;
    for (const at::Tensor& t : p)
      if (!t.defined() || t.scalar_type() != at::kFloat || !out::isDenseCpu(t)) return false;
    if (p[1].dim() != 2) return false;
    const int64_t h = p[1].size(1);
    if (h < 1 || p[0].dim() != 2 || p[0].size(1) < 1) return false;
    for (int64_t l = 0; l < layers; ++l)
      for (int64_t d = 0; d < dirs; ++d) {
        const at::Tensor* w = &p[(l * dirs + d) * per];
        const int64_t in = l == 0 ? p[0].size(1) : dirs * h;
        if (w[0].dim() != 2 || w[0].size(0) != gates * h || w[0].size(1) != in) return false;
        if (w[1].dim() != 2 || w[1].size(0) != gates * h || w[1].size(1) != h) return false;
        for (size_t b = 2; b < per; ++b)
          if (w[b].dim() != 1 || w[b].size(0) != gates * h) return false;
      }
    return true;
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
    std::string s = cell_ == Cell::kLstm ? "brisk LSTM" : "brisk GRU";
    s += ": input projection of all steps in one GEMM, per step ";
    s += layers_w_[0].hh[0].packed() ? std::string("small_gemm (") + out::smallGemmRowsText() + ") / sgemm_"
                                   : std::string("sgemm_");
    s += " on the frozen W_hh and one loop over the gates";
    return s;
  }

  void run(KernelContext& ctx) const {
    const at::Tensor& x = ctx.tensor(0);
    const at::Tensor* h0 = nullptr;
    const at::Tensor* c0 = nullptr;
    if (cell_ == Cell::kGru) {
      h0 = &ctx.tensor(1);
    } else {
      c10::ArrayRef<c10::IValue> hx = ctx.input(1).toListRef();
      if (hx.size() == 2) {
        h0 = &hx[0].toTensor();
        c0 = &hx[1].toTensor();
      }
    }
    if (!fastPath(x, h0, c0)) return runAten(ctx);

    const int64_t steps = x.size(batch_first_ ? 1 : 0), batch = x.size(batch_first_ ? 0 : 1);
    const int64_t h = hidden_, g = gates_ * h, dh = dirs_ * h;
    const int64_t seq_out[3] = {batch_first_ ? batch : steps, batch_first_ ? steps : batch, dh};
    const int64_t state_out[3] = {layers_ * dirs_, batch, h};
    float* y = out::sizedFloatOutput(ctx, 0, seq_out);
    float* hn = out::sizedFloatOutput(ctx, 1, state_out);
    float* cn = cell_ == Cell::kLstm ? out::sizedFloatOutput(ctx, 2, state_out) : nullptr;

    // Scratch, per thread and grown once: the input projections of one layer, the
    // sequences between layers, the recurrent GEMM's result and two states (ping-pong).
    const int64_t rows = steps * batch;
    const int64_t gx_size = rows * dirs_ * g, seq_size = layers_ > 1 ? rows * dh : 0, state = batch * h;
    const size_t need = gx_size + 2 * seq_size + batch * g + 4 * state;
    static thread_local std::vector<float> scratch;
    if (scratch.size() < need) scratch.resize(need);
    float* gx = scratch.data();
    float* seq[2] = {gx + gx_size, gx + gx_size + seq_size};
    float* gh = seq[1] + seq_size;
    float* hbuf[2] = {gh + batch * g, gh + batch * g + state};
    float* cbuf[2] = {hbuf[1] + state, hbuf[1] + 2 * state};

    for (int64_t l = 0; l < layers_; ++l) {
      const Layer& w = layers_w_[l];
      const float* in = l == 0 ? x.data_ptr<float>() : seq[(l - 1) % 2];
      float* out = l == layers_ - 1 ? y : seq[l % 2];
      // Rows keep the sequence's own order (t * B + b, or b * T + t when batch_first).
      w.ih.run(in, rows, gx);
      for (int64_t d = 0; d < dirs_; ++d) {
        const int64_t sd = l * dirs_ + d;
        const float* hp = h0->data_ptr<float>() + sd * state;
        const float* cp = c0 ? c0->data_ptr<float>() + sd * state : nullptr;
        for (int64_t s = 0; s < steps; ++s) {
          const int64_t t = d == 0 ? s : steps - 1 - s;
          w.hh[d].run(hp, batch, gh);
          float* hnext = hbuf[s % 2];
          float* cnext = cbuf[s % 2];
          for (int64_t b = 0; b < batch; ++b) {
            const int64_t row = batch_first_ ? b * steps + t : t * batch + b;
            const float* gxr = gx + row * dirs_ * g + d * g;
            if (cell_ == Cell::kLstm)
              out::lstmGates(gh + b * g, gxr, cp + b * h, hnext + b * h, cnext + b * h, 1, h);
            else
              out::gruGates(gh + b * g, gxr, hp + b * h, hnext + b * h, 1, h);
            std::memcpy(out + row * dh + d * h, hnext + b * h, h * sizeof(float));
          }
          hp = hnext;
          cp = cnext;
        }
        std::memcpy(hn + sd * state, hp, state * sizeof(float));
        if (cn) std::memcpy(cn + sd * state, cp, state * sizeof(float));
      }
    }
  }

 private:
  bool fastPath(const at::Tensor& x, const at::Tensor* h0, const at::Tensor* c0) const {
    if (!plainFloat(x) || x.dim() != 3 || x.size(2) != input_ || x.size(0) == 0 || x.size(1) == 0) return false;
    const int64_t batch = x.size(batch_first_ ? 0 : 1), steps = x.size(batch_first_ ? 1 : 0);
    auto state_ok = [&](const at::Tensor* s) {
      return s && plainFloat(*s) && s->dim() == 3 && s->size(0) == layers_ * dirs_ && s->size(1) == batch &&
             s->size(2) == hidden_;
    };
    if (!state_ok(h0) || (cell_ == Cell::kLstm && !state_ok(c0))) return false;
    return gemmsServe(steps * batch, batch);
  }

  // ATen's layer on the same weights: its results, or its error.
  void runAten(KernelContext& ctx) const {
    if (cell_ == Cell::kLstm) {
      const std::vector<at::Tensor> hx = ctx.input(1).toTensorVector();
      auto r = at::lstm(ctx.tensor(0), hx, params_, has_biases_, layers_, dropout_, false, dirs_ == 2, batch_first_);
      ctx.output(0) = std::move(std::get<0>(r));
      ctx.output(1) = std::move(std::get<1>(r));
      ctx.output(2) = std::move(std::get<2>(r));
    } else {
      auto r = at::gru(ctx.tensor(0), ctx.tensor(1), params_, has_biases_, layers_, dropout_, false, dirs_ == 2,
                       batch_first_);
      ctx.output(0) = std::move(std::get<0>(r));
      ctx.output(1) = std::move(std::get<1>(r));
    }
  }

  Cell cell_;
  int64_t gates_, layers_, dirs_;
  bool has_biases_;
  double dropout_;
  bool batch_first_;
  int64_t hidden_ = 0, input_ = 0;
  std::vector<at::Tensor> params_;  // for runAten
  std::vector<Layer> layers_w_;
};

// aten::lstm.input(input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers,
//   float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)
// aten::gru.input(input, Tensor hx, Tensor[] params, bool has_biases, int num_layers,
//   float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)
std::unique_ptr<Kernel> makeBriskRnn(KernelBuildContext& b, Cell cell, bool small_gemm) {
  const Node& n = b.node();
  const size_t outputs = cell == Cell::kLstm ? 3 : 2;
  if (n.inputs().size() != 9 || n.outputs().size() != outputs) return nullptr;
  for (size_t i = 2; i < 9; ++i)
    if (!isConst(n, i)) return nullptr;
  if (!constant(n, 2).isTensorList()) return nullptr;
  const c10::IValue &biases = constant(n, 3), &layers = constant(n, 4), &dropout = constant(n, 5),
                    &train = constant(n, 6), &bidir = constant(n, 7), &batch_first = constant(n, 8);
  if (!biases.isBool() || !layers.isInt() || !(dropout.isDouble() || dropout.isInt()) || !train.isBool() ||
      !bidir.isBool() || !batch_first.isBool())
    return nullptr;
  if (train.toBool()) return nullptr;  // rnn.cc's kernel refuses it with its message
  std::vector<at::Tensor> params = constant(n, 2).toTensorVector();
  const int64_t gates = cell == Cell::kLstm ? 4 : 3;
  // A projection (proj_size) adds a fifth weight per layer and direction: not covered.
  if (!BriskRnn::shapesFit(params, gates, layers.toInt(), bidir.toBool() ? 2 : 1, biases.toBool())) return nullptr;
  auto rnn = std::make_shared<BriskRnn>(cell, std::move(params), biases.toBool(), layers.toInt(),
                                        dropout.isDouble() ? dropout.toDouble() : double(dropout.toInt()),
                                        bidir.toBool(), batch_first.toBool(), small_gemm);
  if (!rnn->gemmsServe(1, 1)) return nullptr;
  return out::makeKernel(rnn->describe(), [rnn](KernelContext& ctx) { rnn->run(ctx); });
}

}  // namespace

void registerBriskRnnKernels(PluginRegistrar& r) {
  const PluginOption<bool> small_gemm = out::declareSmallGemmOption(r);
  r.outVariant("aten::lstm.input",
               [small_gemm](KernelBuildContext& b) { return makeBriskRnn(b, Cell::kLstm, b.pluginOption(small_gemm)); });
  r.outVariant("aten::gru.input",
               [small_gemm](KernelBuildContext& b) { return makeBriskRnn(b, Cell::kGru, b.pluginOption(small_gemm)); });
}

}  // namespace brisk::ops_cpu::native
