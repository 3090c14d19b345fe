// ops_cpu::lstm_step (lstm_step.h): its dispatcher registration, the reference
// implementation (the unfused ATen sequence) and the out-variant kernel.
//
// The kernel computes the recurrent GEMM exactly as the unfused aten::addmm kernel
// (linear.cc, constant mat2) would -- the packed small GEMM where smallGemmTakes() the
// shape, when the plugin option ops_cpu.small_gemm is on, else the BLAS call ATen makes -- so the gate
// pre-activations are the same bits as without the fusion. The elementwise part then
// runs once per element instead of as ten nodes with a tensor each (simd/lstm_gates.h:
// AVX2 exp / tanh polynomials, a few ulp from ATen's vectorized functions). Anything the
// fast path does not cover (other dtypes, non-contiguous or broadcasting operands,
// shapes other than the ones the node was built for) runs the reference, i.e. the
// unfused ops, with their results and their errors.
#include "ops_cpu/fused/lstm_step.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <mutex>
#include <optional>
#include <vector>

#include "ops_cpu/fused/rnn_frozen_linear.h"
#include "ops_cpu/out_variant/common.h"
#include "ops_cpu/simd/lstm_gates.h"

namespace brisk::ops_cpu {
namespace {

std::tuple<at::Tensor, at::Tensor> lstmStepReference(const at::Tensor& gx_in, const at::Tensor& h,
                                                     const at::Tensor& c, const at::Tensor& w_hh_t,
                                                     const at::Tensor& b_hh, c10::IntArrayRef h_shape,
                                                     c10::IntArrayRef gates_shape, int64_t split_dim,
                                                     int64_t x_step) {
  TORCH_CHECK(!gates_shape.empty() && gates_shape.back() % 4 == 0,
              "ops_cpu::lstm_step: gates_shape must end in 4 * hidden, got ", gates_shape);
  const int64_t hidden = gates_shape.back() / 4;
  // x_step >= 0: gx holds every step's projection; this step's is the slice the graph
  // took before the fusion absorbed it.
  const at::Tensor gates_x = x_step >= 0 ? at::squeeze(at::slice(gx_in, 0, x_step, x_step + 1, 1), {0}) : gx_in;
  const at::Tensor gates = at::add(at::addmm(b_hh, h.view(h_shape), w_hh_t).view(gates_shape), gates_x);
  const std::vector<at::Tensor> g = at::split_with_sizes(gates, {hidden, hidden, hidden, hidden}, split_dim);
  at::Tensor c2 = at::add(at::mul(at::sigmoid(g[1]), c), at::mul(at::sigmoid(g[0]), at::tanh(g[2])));
  at::Tensor h2 = at::mul(at::sigmoid(g[3]), at::tanh(c2));
  return {std::move(h2), std::move(c2)};
}

const c10::FunctionSchema* registerSchema() {
  const c10::OperatorName name{kLstmStepOp, ""};
  if (auto op = c10::Dispatcher::singleton().findSchema(name)) return &op->schema();  // another copy of the plugin
  // Never destroyed: the dispatcher keeps the registration for the whole process (a
  // plugin is never unloaded), as TORCH_LIBRARY's static registrations do. Held by a
  // static so it stays reachable (not a leak to LeakSanitizer).
  static torch::Library* lib = nullptr;
  lib = new torch::Library(torch::Library::FRAGMENT, "ops_cpu", std::nullopt, __FILE__, __LINE__);
  lib->def(
      "lstm_step(Tensor gates_x, Tensor h, Tensor c, Tensor w_hh_t, Tensor b_hh, int[] h_shape, int[] gates_shape, "
      "int split_dim, int x_step) -> (Tensor, Tensor)");
  lib->impl("lstm_step", torch::dispatch(c10::DispatchKey::CPU, TORCH_FN(lstmStepReference)));
  return &c10::Dispatcher::singleton().findSchemaOrThrow(kLstmStepOp, "").schema();
}

// True when `sizes` broadcasts to `to` (out::broadcastsTo for a shape).
bool broadcastsTo(c10::IntArrayRef sizes, c10::IntArrayRef to) {
  const size_t d = sizes.size(), n = to.size();
  if (d > n) return false;
  for (size_t i = 1; i <= d; ++i)
    if (sizes[d - i] != 1 && sizes[d - i] != to[n - i]) return false;
  return true;
}

bool plainFloat(const at::Tensor& t) {
  return t.scalar_type() == at::kFloat && out::isDenseCpu(t) && t.is_contiguous();
}

// Everything the kernel fixed at load: the recurrent weight in both GEMM forms, the
// shapes the node was built for.
struct LstmStep {
  int64_t rows, k, hidden;          // h viewed as [rows, k]; gates [rows, 4 * hidden]
  std::vector<int64_t> h_shape, gates_shape, out_shape;
  int64_t split_dim, x_step;
  at::Tensor w_hh_t, b_hh;  // for the reference
  std::optional<FrozenLinear> gemm;  // W_hh = w_hh_t^T, b_hh

  void run(KernelContext& ctx) const {
    const at::Tensor& gx = ctx.tensor(0);
    const at::Tensor& h = ctx.tensor(1);
    const at::Tensor& c = ctx.tensor(2);
    // This step's projection: all of gx, or its row x_step (dim 0) when the fusion
    // absorbed the slice.
    c10::IntArrayRef x_sizes = gx.sizes();
    int64_t x_numel = gx.numel();
    const bool has_row = x_step < 0 || (gx.dim() >= 1 && gx.size(0) > x_step);
    if (x_step >= 0 && has_row) {
      x_sizes = x_sizes.slice(1);
      x_numel /= gx.size(0);
    }
    const bool fast = has_row && plainFloat(gx) && plainFloat(h) && plainFloat(c) && h.numel() == rows * k &&
                      x_numel == rows * 4 * hidden && broadcastsTo(x_sizes, gates_shape) &&
                      c.numel() == rows * hidden && out::broadcastsTo(c, out_shape) &&
                      gemm->serves(rows);
    if (!fast) {
      auto [h2, c2] = lstmStepReference(gx, h, c, w_hh_t, b_hh, h_shape, gates_shape, split_dim, x_step);
      ctx.output(0) = std::move(h2);
      ctx.output(1) = std::move(c2);
      return;
    }
    float* h2 = out::sizedFloatOutput(ctx, 0, out_shape);
    float* c2 = out::sizedFloatOutput(ctx, 1, out_shape);
    if (rows == 0) return;  // the BLAS call is not made with an empty dimension
    // The gate pre-activations of the recurrent GEMM; per thread, grown once.
    static thread_local std::vector<float> scratch;
    const int64_t n = 4 * hidden;
    if (scratch.size() < static_cast<size_t>(rows * n)) scratch.resize(rows * n);
    float* gh = scratch.data();
    gemm->run(h.data_ptr<float>(), rows, gh);
    const float* gxp = gx.data_ptr<float>() + (x_step >= 0 ? x_step * x_numel : 0);
    out::lstmGates(gh, gxp, c.data_ptr<float>(), h2, c2, rows, hidden);
  }
};

std::unique_ptr<Kernel> makeLstmStep(KernelBuildContext& b, bool small_gemm) {
  using namespace out;
  if (numInputs(b) != 9) return nullptr;
  const at::Tensor wt = constTensor(b, 3), bias = constTensor(b, 4);
  auto h_shape = constInts(b, 5), gates_shape = constInts(b, 6);
  auto split_dim = constInt(b, 7), x_step = constInt(b, 8);
  if (!wt.defined() || !bias.defined() || !h_shape || !gates_shape || !split_dim || !x_step) return nullptr;
  if (wt.scalar_type() != at::kFloat || wt.dim() != 2 || !isDenseCpu(wt) || bias.scalar_type() != at::kFloat ||
      bias.dim() != 1 || !isDenseCpu(bias))
    return nullptr;
  const int64_t k = wt.size(0), n = wt.size(1);
  if (n % 4 != 0 || n < 4 || bias.size(0) != n || h_shape->size() != 2 || (*h_shape)[1] != k || (*h_shape)[0] < 0 ||
      gates_shape->empty() || gates_shape->back() != n)
    return nullptr;
  const int64_t rows = (*h_shape)[0];
  int64_t gates_numel = 1;
  for (int64_t s : *gates_shape) gates_numel *= s;
  const int64_t last = static_cast<int64_t>(gates_shape->size()) - 1;
  if (gates_numel != rows * n || (*split_dim != last && *split_dim != -1)) return nullptr;

  auto step = std::make_shared<LstmStep>();
  step->rows = rows;
  step->k = k;
  step->hidden = n / 4;
  step->h_shape = *h_shape;
  step->gates_shape = *gates_shape;
  step->out_shape = *gates_shape;
  step->out_shape.back() = n / 4;
  step->split_dim = *split_dim;
  step->x_step = *x_step;
  step->w_hh_t = wt;
  step->b_hh = bias;
  step->gemm.emplace(wt.t(), bias, small_gemm);
  std::string desc = "brisk LSTM step: ";
  if (step->gemm->packed()) desc += std::string("small_gemm (") + out::smallGemmRowsText() + ") / ";
  desc += step->gemm->blas() ? "sgemm_" : "ATen ops";
  desc += ", one loop over the gates";
  return makeKernel(desc, [step](KernelContext& ctx) { step->run(ctx); });
}

}  // namespace

const c10::FunctionSchema& lstmStepSchema() {
  static std::mutex mu;
  static const c10::FunctionSchema* schema = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (!schema) schema = registerSchema();
  return *schema;
}

void registerLstmStep(PluginRegistrar& r) {
  lstmStepSchema();
  const PluginOption<bool> small_gemm = out::declareSmallGemmOption(r);
  r.outVariant(kLstmStepOp,
               [small_gemm](KernelBuildContext& b) { return makeLstmStep(b, b.pluginOption(small_gemm)); });
}

}  // namespace brisk::ops_cpu
