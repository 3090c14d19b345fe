// `bazel run //tools/bench:kernel_bench`: brisk's hand-written CPU kernels against the
// path torch itself takes for the same work, one thread, same inputs, same process:
//   small_gemm      linear at 1-512 rows, packed weight    vs  MKL's sgemm_ as ATen
//                   calls it for addmm(bias, x, w.t()) (and at::addmm, with its per-call
//                   work)
//   depthwise_nchw  3x3 depthwise conv, NCHW                vs  at::conv2d (oneDNN)
//   max_pool_nchw   max_pool2d, NCHW                        vs  at::max_pool2d
//   max_pool_nhwc   max_pool2d, channels-last float          vs  at::max_pool2d
//   attention       one scaled dot-product attention call,  vs  at::scaled_dot_product_attention
//                   all heads, fp32 and bf16 products            (flash attention on CPU), fp32
//                                                                and on bf16 operands
//   fused_pointwise elementwise chains, each vector path       vs  the same ATen ops,
//                   (AVX-512, AVX2) of the interpreter          one after another
// For every case: median time per call over rounds of ~20 ms, the ratio torch / brisk
// (above 1: brisk's kernel is faster), and the largest difference between the results.
// This is a benchmark, not a test: it prints, it never fails on a number.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <dlfcn.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "ops_cpu/simd/attention.h"
#include "ops_cpu/simd/depthwise_nchw.h"
#include "ops_cpu/simd/max_pool_nchw.h"
#include "ops_cpu/simd/max_pool_nhwc.h"
#include "ops_cpu/simd/pointwise_program.h"
#include "ops_cpu/simd/small_gemm.h"
#include "core/report/stats.h"

namespace {

using brisk::ops_cpu::out::WindowDim;
using Clock = std::chrono::steady_clock;

// Median seconds per call of fn over `rounds` rounds of about `round_s` each.
double medianSeconds(const std::function<void()>& fn, int rounds = 15, double round_s = 0.02) {
  for (int i = 0; i < 3; ++i) fn();
  auto t0 = Clock::now();
  fn();
  const double once = std::max(1e-7, std::chrono::duration<double>(Clock::now() - t0).count());
  const int iters = std::max(1, static_cast<int>(round_s / once));
  std::vector<double> per_call;
  for (int r = 0; r < rounds; ++r) {
    auto a = Clock::now();
    for (int i = 0; i < iters; ++i) fn();
    per_call.push_back(std::chrono::duration<double>(Clock::now() - a).count() / iters);
  }
  return brisk::report::median(per_call);
}

void row(const std::string& kernel, const std::string& shape, const std::string& torch_path, double brisk_s,
         double torch_s, double max_diff) {
  std::printf("| %s | %s | %s | %.2f | %.2f | %.2f | %.1e |\n", kernel.c_str(), shape.c_str(), torch_path.c_str(),
              brisk_s * 1e6, torch_s * 1e6, torch_s / brisk_s, max_diff);
  std::fflush(stdout);
}

double maxDiff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

using SgemmFn = void (*)(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
                         const int*, const float*, const int*, const float*, float*, const int*);

void benchSmallGemm() {
  namespace o = brisk::ops_cpu::out;
  if (!o::smallGemmAvailable()) {
    std::printf("small_gemm: skipped (no AVX2+FMA)\n");
    return;
  }
  auto sgemm = reinterpret_cast<SgemmFn>(dlsym(RTLD_DEFAULT, "sgemm_"));
  // Zoo layers (mlp 256-512-512-10, deepandwide 32-64-32 / 160-150...) and larger ones.
  const std::vector<std::pair<int64_t, int64_t>> layers = {{256, 512}, {512, 512}, {512, 10},  {32, 64},
                                                          {160, 150}, {1024, 1024}, {4096, 1024}};
  for (auto [k, n] : layers) {
    at::Tensor w = at::randn({n, k}), bias = at::randn({n});
    at::Tensor packed = at::empty({o::smallGemmPackedSize(k, n)});
    o::smallGemmPack(w.data_ptr<float>(), w.stride(1), w.stride(0), k, n, packed.data_ptr<float>());
    for (int64_t m : {1, 2, 4, 8, 16, 64, 512}) {
      at::Tensor x = at::randn({m, k}), y = at::empty({m, n}), y_ref = at::empty({m, n});
      const int64_t panels = o::smallGemmPanels(n);
      auto brisk = [&] {
        o::smallGemm(x.data_ptr<float>(), k, packed.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(), n,
                     m, k, n, 0, panels);
      };
      // ATen's own sgemm_ call for addmm(bias, x, w.t()) (what brisk runs with
      // small_gemm off): bias rows copied into y, then y^T += w x^T.
      auto blas = [&] {
        float* yp = y_ref.data_ptr<float>();
        for (int64_t i = 0; i < m; ++i) std::copy_n(bias.data_ptr<float>(), n, yp + i * n);
        const char ta = 'T', tb = 'N';
        const int mi = n, ni = m, ki = k, lda = k, ldb = k, ldc = n;
        const float one = 1.f;
        sgemm(&ta, &tb, &mi, &ni, &ki, &one, w.data_ptr<float>(), &lda, x.data_ptr<float>(), &ldb, &one, yp, &ldc);
      };
      at::Tensor wt = w.t();
      auto addmm = [&] { at::addmm_out(y_ref, bias, x, wt); };
      const std::string shape = std::to_string(m) + "x" + std::to_string(k) + " * " + std::to_string(k) + "x" +
                                std::to_string(n);
      const double tb = medianSeconds(brisk);
      if (sgemm) {
        const double ts = medianSeconds(blas);
        brisk();
        blas();
        row("small_gemm", shape, "MKL sgemm_ (ATen's call)", tb, ts, maxDiff(y, y_ref));
      }
      const double ta = medianSeconds(addmm);
      row("small_gemm", shape, "at::addmm_out", tb, ta, maxDiff(y, at::addmm(bias, x, wt)));
    }
  }
}

void benchDepthwise() {
  namespace o = brisk::ops_cpu::out;
  if (!o::depthwiseDirectAvailable()) {
    std::printf("depthwise_nchw: skipped (no AVX2+FMA)\n");
    return;
  }
  struct Layer {
    int64_t c, hw, stride;
  };
  // mobilenet_v2's 3x3 depthwise layers (channels, input size, stride).
  const std::vector<Layer> layers = {{32, 112, 1},  {96, 112, 2}, {144, 56, 1}, {144, 56, 2}, {192, 28, 1},
                                     {192, 28, 2},  {384, 14, 1}, {576, 14, 1}, {576, 14, 2}, {960, 7, 1}};
  for (int64_t batch : {1, 8}) {
    double brisk_total = 0, torch_total = 0;
    for (const Layer& l : layers) {
      at::Tensor x = at::randn({batch, l.c, l.hw, l.hw}), w = at::randn({l.c, 1, 3, 3}), b = at::randn({l.c});
      WindowDim h{l.hw, 0, 3, l.stride, 1, 1};
      h.out = (h.in + 2 * h.pad - 3) / h.stride + 1;
      WindowDim wd = h;
      at::Tensor y = at::empty({batch, l.c, h.out, wd.out});
      auto brisk = [&] {
        o::depthwiseConv2dPlanes(x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(),
                                 0, batch * l.c, l.c, h, wd);
      };
      auto torch = [&] { return at::conv2d(x, w, b, {l.stride, l.stride}, {1, 1}, {1, 1}, l.c); };
      const double tb = medianSeconds(brisk);
      const double tt = medianSeconds([&] { torch(); });
      brisk_total += tb;
      torch_total += tt;
      brisk();
      row("depthwise_nchw",
          std::to_string(batch) + "x" + std::to_string(l.c) + "x" + std::to_string(l.hw) + "^2 s" +
              std::to_string(l.stride),
          "at::conv2d (oneDNN)", tb, tt, maxDiff(y, torch()));
    }
    row("depthwise_nchw", "all 10 layers, batch " + std::to_string(batch), "at::conv2d (oneDNN)", brisk_total,
        torch_total, 0);
  }
}

void benchMaxPool() {
  namespace o = brisk::ops_cpu::out;
  struct Case {
    int64_t n, c, hw, k, s, p;
  };
  // resnet18's stem pool at batch 1 and 8, and a 2x2/2 pool.
  const std::vector<Case> cases = {{1, 64, 112, 3, 2, 1}, {8, 64, 112, 3, 2, 1}, {1, 64, 56, 2, 2, 0}};
  for (const Case& cs : cases) {
    at::Tensor x = at::randn({cs.n, cs.c, cs.hw, cs.hw});
    WindowDim h{cs.hw, 0, cs.k, cs.s, cs.p, 1};
    h.out = o::maxPoolOutputSize(h.in, h.kernel, h.pad, h.stride, h.dilation, false);
    at::Tensor y = at::empty({cs.n, cs.c, h.out, h.out});
    auto brisk = [&] { o::maxPool2dPlanes(x.data_ptr<float>(), y.data_ptr<float>(), cs.n * cs.c, h, h); };
    auto torch = [&] { return at::max_pool2d(x, {cs.k, cs.k}, {cs.s, cs.s}, {cs.p, cs.p}); };
    const double tb = medianSeconds(brisk);
    const double tt = medianSeconds([&] { torch(); });
    brisk();
    row("max_pool_nchw",
        std::to_string(cs.n) + "x" + std::to_string(cs.c) + "x" + std::to_string(cs.hw) + "^2 k" +
            std::to_string(cs.k) + " s" + std::to_string(cs.s),
        "at::max_pool2d", tb, tt, maxDiff(y, torch()));
  }
}

// Channels-last inputs, as they come out of oneDNN convolution partitions: ATen's
// kernel also writes an int64 index per output value.
void benchMaxPoolNhwc() {
  namespace o = brisk::ops_cpu::out;
  struct Case {
    int64_t n, c, hw, k, s, p;
  };
  const std::vector<Case> cases = {{1, 64, 112, 3, 2, 1}, {8, 64, 112, 3, 2, 1}, {1, 192, 28, 3, 2, 1}};
  for (const Case& cs : cases) {
    at::Tensor x = at::randn({cs.n, cs.c, cs.hw, cs.hw}).contiguous(at::MemoryFormat::ChannelsLast);
    WindowDim h{cs.hw, 0, cs.k, cs.s, cs.p, 1};
    h.out = o::maxPoolOutputSize(h.in, h.kernel, h.pad, h.stride, h.dilation, false);
    at::Tensor y = at::empty({cs.n, cs.c, h.out, h.out}, x.options().memory_format(at::MemoryFormat::ChannelsLast));
    auto brisk = [&] { o::maxPool2dNhwcRows(x.data_ptr<float>(), y.data_ptr<float>(), cs.c, h, h, 0, cs.n * h.out); };
    auto torch = [&] { return at::max_pool2d(x, {cs.k, cs.k}, {cs.s, cs.s}, {cs.p, cs.p}); };
    const double tb = medianSeconds(brisk);
    const double tt = medianSeconds([&] { torch(); });
    brisk();
    row("max_pool_nhwc",
        std::to_string(cs.n) + "x" + std::to_string(cs.c) + "x" + std::to_string(cs.hw) + "^2 k" +
            std::to_string(cs.k) + " s" + std::to_string(cs.s),
        "at::max_pool2d", tb, tt, maxDiff(y, torch()));
  }
}

// Elementwise tails as the fusion pass builds them, on every vector path this CPU runs:
// a transformer FFN's bias + exact GELU, a residual add + ReLU, and SiLU.
void benchPointwise() {
  namespace pw = brisk::ops_cpu::pw;
  struct Case {
    const char* name;
    std::vector<pw::Instr> code;  // inputs: 0 = x (full), 1 = y (full), 2 = b (row)
    std::function<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&)> torch;
  };
  const std::vector<Case> cases = {
      {"gelu(x + b)", {{pw::Op::kAdd, 3, 0, 2, 0, 0, 5}, {pw::Op::kGeluErf, 3, 3, 0, 0, 0, 5}},
       [](const at::Tensor& x, const at::Tensor&, const at::Tensor& b) { return at::gelu(x + b); }},
      {"relu(x + y)", {{pw::Op::kAdd, 3, 0, 1, 0, 0, 3}, {pw::Op::kRelu, 3, 3, 0, 0, 0, 3}},
       [](const at::Tensor& x, const at::Tensor& y, const at::Tensor&) { return at::relu(x + y); }},
      {"silu(x)", {{pw::Op::kSilu, 3, 0, 0, 0, 0, 1}},
       [](const at::Tensor& x, const at::Tensor&, const at::Tensor&) { return at::silu(x); }},
  };
  const int64_t rows = 64, inner = 3072, n = rows * inner;
  const at::Tensor x = at::randn({rows, inner}), y = at::randn({rows, inner}), b = at::randn({inner});
  pw::Input in[3];
  in[0].kind = in[1].kind = pw::InputKind::kFull;
  in[0].data = x.data_ptr<float>();
  in[1].data = y.data_ptr<float>();
  in[2].kind = pw::InputKind::kRow;
  in[2].data = b.data_ptr<float>();
  for (const Case& cs : cases) {
    pw::Program p;
    p.num_inputs = 3;
    p.num_registers = 1;
    p.code = cs.code;
    p.outputs = {{3, false}};
    at::Tensor out = at::empty({rows, inner});
    void* outs[1] = {out.data_ptr()};
    const double tt = medianSeconds([&] { cs.torch(x, y, b); });
    for (pw::Isa isa : {pw::Isa::kAvx512, pw::Isa::kAvx2}) {
      if (!pw::runsOn(isa)) continue;
      const double tb = medianSeconds([&] { pw::runWith(isa, p, in, outs, 0, n, inner); });
      row(std::string("fused_pointwise ") + pw::isaName(isa), std::string(cs.name) + " 64x3072",
          "ATen ops, unfused", tb, tt, maxDiff(out, cs.torch(x, y, b)));
    }
  }
}

}  // namespace


// q, k, v [1, H, L, D] as the zoo's transformer slices them out of its in_proj result
// (rows 3 * H * D floats apart); brisk's kernel per head into [1, L, H, D] memory.
void benchAttention() {
  using brisk::ops_cpu::out::AttentionDims;
  using brisk::ops_cpu::out::AttentionMath;
  struct Case {
    int64_t h, l, d;
  };
  for (const Case c : {Case{4, 64, 64}, Case{12, 128, 64}, Case{3, 197, 64}}) {
    const at::Tensor qkv = at::randn({c.l, 3, c.h, c.d});
    auto part = [&](int64_t i) { return qkv.select(1, i).unsqueeze(0).transpose(1, 2); };  // [1, H, L, D]
    const at::Tensor q = part(0), k = part(1), v = part(2);
    for (AttentionMath math : {AttentionMath::kFp32, AttentionMath::kBf16}) {
      if (!brisk::ops_cpu::out::attentionRuns(math)) continue;
      const AttentionDims dims{c.l, c.l, c.d, c.d};
      std::vector<uint8_t> scratch(brisk::ops_cpu::out::attentionScratchBytes(dims, math) + 64);
      void* aligned = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
      at::Tensor out = at::empty({1, c.l, c.h, c.d});
      const float scale = 1.0f / std::sqrt(static_cast<float>(c.d));
      auto brisk_fn = [&] {
        for (int64_t hi = 0; hi < c.h; ++hi)
          brisk::ops_cpu::out::attentionHead(dims, q.data_ptr<float>() + hi * q.stride(1), q.stride(2),
                                             k.data_ptr<float>() + hi * k.stride(1), k.stride(2),
                                             v.data_ptr<float>() + hi * v.stride(1), v.stride(2),
                                             out.data_ptr<float>() + hi * c.d, c.h * c.d, scale, false, math,
                                             aligned);
      };
      const bool bf16 = math == AttentionMath::kBf16;
      const at::Tensor qb = bf16 ? q.to(at::kBFloat16) : q, kb = bf16 ? k.to(at::kBFloat16) : k,
                       vb = bf16 ? v.to(at::kBFloat16) : v;
      at::Tensor ref;
      auto torch_fn = [&] { ref = at::scaled_dot_product_attention(qb, kb, vb); };
      const double tb = medianSeconds(brisk_fn), tt = medianSeconds(torch_fn);
      brisk_fn();
      torch_fn();
      const std::string shape = "H" + std::to_string(c.h) + " L" + std::to_string(c.l) + " D" + std::to_string(c.d);
      row(bf16 ? "attention bf16" : "attention fp32", shape,
          bf16 ? "at::scaled_dot_product_attention, bf16 operands" : "at::scaled_dot_product_attention",
          tb, tt, maxDiff(out.transpose(1, 2), ref.to(at::kFloat)));
    }
  }
}

int main() {
  at::set_num_threads(1);
  at::manual_seed(0);
  c10::InferenceMode inference;
  std::printf("torch %s, ATen CPU capability %s, one intra-op thread\n\n", TORCH_VERSION,
              at::get_cpu_capability().c_str());
  std::printf("| kernel | shape | torch's path | brisk µs | torch µs | torch / brisk | max |diff| |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  benchSmallGemm();
  benchDepthwise();
  benchMaxPool();
  benchMaxPoolNhwc();
  benchPointwise();
  benchAttention();
  return 0;
}
