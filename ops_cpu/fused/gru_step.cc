// ops_cpu::gru_step (gru_step.h): its dispatcher registration, the reference
// implementation (the unfused ATen sequence) and the out-variant kernel.
//
// The kernel computes the recurrent GEMM as the unfused aten::addmm kernel (linear.cc,
// constant mat2) would -- the packed small GEMM where smallGemmTakes() the shape and the
// plugin option ops_cpu.small_gemm is on, else ATen's BLAS call -- so the gate
// pre-activations are the same bits as without the fusion; the elementwise part then
// runs once per element (simd/gru_gates.h) instead of as ten nodes. Anything the fast
// path does not cover (other dtypes, non-contiguous or broadcasting operands) runs the
// reference, i.e. the unfused ops, with their results and their errors.
#include "ops_cpu/fused/gru_step.h"

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <mutex>
#include <optional>
#include <vector>

#include "ops_cpu/fused/rnn_frozen_linear.h"
#include "ops_cpu/out_variant/common.h"
#include "ops_cpu/simd/gru_gates.h"

namespace brisk::ops_cpu {
namespace {

at::Tensor gruStepReference(const at::Tensor& gx_in, const at::Tensor& h, const at::Tensor& w_hh_t,
                            const at::Tensor& b_hh, c10::IntArrayRef h_shape, c10::IntArrayRef gates_shape,
                            int64_t split_dim, int64_t x_split_dim, int64_t x_step) {
  TORCH_CHECK(!gates_shape.empty() && gates_shape.back() % 3 == 0,
              "ops_cpu::gru_step: gates_shape must end in 3 * hidden, got ", gates_shape);
  const int64_t hd = gates_shape.back() / 3;
  // x_step >= 0: gx holds every step's projection; this step's is the slice the graph
  // took before the fusion absorbed it.
  const at::Tensor gx = x_step >= 0 ? at::squeeze(at::slice(gx_in, 0, x_step, x_step + 1, 1), {0}) : gx_in;
  const at::Tensor gh = at::addmm(b_hh, h.view(h_shape), w_hh_t).view(gates_shape);
  const std::vector<at::Tensor> x = at::split_with_sizes(gx, {hd, hd, hd}, x_split_dim);
  const std::vector<at::Tensor> g = at::split_with_sizes(gh, {hd, hd, hd}, split_dim);
  const at::Tensor r = at::sigmoid(at::add(g[0], x[0]));
  const at::Tensor z = at::sigmoid(at::add(g[1], x[1]));
  const at::Tensor n = at::tanh(at::add(x[2], at::mul(g[2], r)));
  return at::add(at::mul(at::sub(h, n), z), n);
}

const c10::FunctionSchema* registerSchema() {
  const c10::OperatorName name{kGruStepOp, ""};
  if (auto op = c10::Dispatcher::singleton().findSchema(name)) return &op->schema();  // another copy of the plugin
  // Never destroyed, as lstm_step.cc's registration (a plugin is never unloaded).
  static torch::Library* lib = nullptr;
  lib = new torch::Library(torch::Library::FRAGMENT, "ops_cpu", std::nullopt, __FILE__, __LINE__);
  lib->def(
      "gru_step(Tensor gx, Tensor h, Tensor w_hh_t, Tensor b_hh, int[] h_shape, int[] gates_shape, int split_dim, "
      "int x_split_dim, int x_step) -> Tensor");
  lib->impl("gru_step", torch::dispatch(c10::DispatchKey::CPU, TORCH_FN(gruStepReference)));
  return &c10::Dispatcher::singleton().findSchemaOrThrow(kGruStepOp, "").schema();
}

bool plainFloat(const at::Tensor& t) {
  return t.scalar_type() == at::kFloat && out::isDenseCpu(t) && t.is_contiguous();
}

// Everything the kernel fixed at load: the recurrent weight in both GEMM forms, the
// shapes the node was built for.
struct GruStep {
  int64_t rows, k, hidden;  // h viewed as [rows, k]; gates [rows, 3 * hidden]
  std::vector<int64_t> h_shape, gates_shape, gate_shape;  // gate_shape: gates_shape with H last
  int64_t split_dim, x_split_dim, x_step;
  at::Tensor w_hh_t, b_hh;  // for the reference
  std::optional<FrozenLinear> gemm;  // W_hh = w_hh_t^T, b_hh

  void reference(KernelContext& ctx, const at::Tensor& gx, const at::Tensor& h) const {
    ctx.output(0) = gruStepReference(gx, h, w_hh_t, b_hh, h_shape, gates_shape, split_dim, x_split_dim, x_step);
  }

  void run(KernelContext& ctx) const {
    const at::Tensor& gx = ctx.tensor(0);
    const at::Tensor& h = ctx.tensor(1);
    const int64_t n = 3 * hidden;
    if (!gemm->serves(rows) || !plainFloat(gx) || !plainFloat(h) || h.numel() != rows * k) return reference(ctx, gx, h);
    // This step's projection: all of gx, or its row x_step (dim 0) when the fusion
    // absorbed the slice.
    c10::IntArrayRef x_sizes = gx.sizes();
    const float* gxp = gx.data_ptr<float>();
    int64_t x_numel = gx.numel();
    if (x_step >= 0) {
      if (gx.dim() < 1 || gx.size(0) <= x_step) return reference(ctx, gx, h);
      x_sizes = x_sizes.slice(1);
      x_numel /= gx.size(0);
      gxp += x_step * x_numel;
    }
    const int64_t x_dim = static_cast<int64_t>(x_sizes.size());
    if (x_numel != rows * n || x_dim == 0 || x_sizes.back() != n || (x_split_dim != -1 && x_split_dim != x_dim - 1))
      return reference(ctx, gx, h);
    // The result's shape: h broadcast with the gates' [..., H]; the fast path needs
    // every operand to have the result's element count (no operand is expanded).
    c10::SmallVector<int64_t, 6> x_shape(x_sizes.begin(), x_sizes.end());
    x_shape.back() = hidden;
    const at::DimVector out_shape =
        at::infer_size_dimvector(h.sizes(), at::infer_size_dimvector(x_shape, gate_shape));
    int64_t out_numel = 1;
    for (int64_t s : out_shape) out_numel *= s;
    if (out_numel != rows * hidden) return reference(ctx, gx, h);

    float* ho = out::sizedFloatOutput(ctx, 0, out_shape);
    if (rows == 0) return;  // the BLAS call is not made with an empty dimension
    // The gate pre-activations of the recurrent GEMM; per thread, grown once.
    static thread_local std::vector<float> scratch;
    if (scratch.size() < static_cast<size_t>(rows * n)) scratch.resize(rows * n);
    float* gh = scratch.data();
    const float* hp = h.data_ptr<float>();
    gemm->run(hp, rows, gh);
    out::gruGates(gh, gxp, hp, ho, rows, hidden);
  }
};

std::unique_ptr<Kernel> makeGruStep(KernelBuildContext& b, bool small_gemm) {
  using namespace out;
  if (numInputs(b) != 9) return nullptr;
  const at::Tensor wt = constTensor(b, 2), bias = constTensor(b, 3);
  auto h_shape = constInts(b, 4), gates_shape = constInts(b, 5);
  auto split_dim = constInt(b, 6), x_split_dim = constInt(b, 7), x_step = constInt(b, 8);
  if (!wt.defined() || !bias.defined() || !h_shape || !gates_shape || !split_dim || !x_split_dim || !x_step)
    return nullptr;
  if (wt.scalar_type() != at::kFloat || wt.dim() != 2 || !isDenseCpu(wt) || bias.scalar_type() != at::kFloat ||
      bias.dim() != 1 || !isDenseCpu(bias))
    return nullptr;
  const int64_t k = wt.size(0), n = wt.size(1);
  // The state is both the GEMM's input and the gates' h: K = H.
  if (n % 3 != 0 || n < 3 || k != n / 3 || bias.size(0) != n || h_shape->size() != 2 || (*h_shape)[1] != k ||
      (*h_shape)[0] < 0 || gates_shape->empty() || gates_shape->back() != n)
    return nullptr;
  const int64_t rows = (*h_shape)[0];
  int64_t gates_numel = 1;
  for (int64_t s : *gates_shape) gates_numel *= s;
  const int64_t last = static_cast<int64_t>(gates_shape->size()) - 1;
  if (gates_numel != rows * n || (*split_dim != last && *split_dim != -1)) return nullptr;

  auto step = std::make_shared<GruStep>();
  step->rows = rows;
  step->k = k;
  step->hidden = n / 3;
  step->h_shape = *h_shape;
  step->gates_shape = *gates_shape;
  step->gate_shape = *gates_shape;
  step->gate_shape.back() = n / 3;
  step->split_dim = *split_dim;
  step->x_split_dim = *x_split_dim;
  step->x_step = *x_step;
  step->w_hh_t = wt;
  step->b_hh = bias;
  step->gemm.emplace(wt.t(), bias, small_gemm);
  std::string desc = "brisk GRU step: ";
  if (step->gemm->packed()) desc += std::string("small_gemm (") + out::smallGemmRowsText() + ") / ";
  desc += step->gemm->blas() ? "sgemm_" : "ATen ops";
  desc += ", one loop over the gates";
  return makeKernel(desc, [step](KernelContext& ctx) { step->run(ctx); });
}

}  // namespace

const c10::FunctionSchema& gruStepSchema() {
  static std::mutex mu;
  static const c10::FunctionSchema* schema = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (!schema) schema = registerSchema();
  return *schema;
}

void registerGruStep(PluginRegistrar& r) {
  gruStepSchema();
  const PluginOption<bool> small_gemm = out::declareSmallGemmOption(r);
  r.outVariant(kGruStepOp, [small_gemm](KernelBuildContext& b) { return makeGruStep(b, b.pluginOption(small_gemm)); });
}

}  // namespace brisk::ops_cpu
