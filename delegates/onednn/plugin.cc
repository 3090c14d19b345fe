// libbrisk_onednn.so: the onednn delegate backend. It claims convolution and linear
// chains (fusion_chain.h) and compiles each into one fused oneDNN call with a packed
// weight (fused_ops.h). See README.md.
#include <glog/logging.h>

#include <algorithm>
#include <unordered_set>

#include "core/common/options.h"
#include "core/graph/graph.h"
#include "core/kernels/delegate.h"
#include "core/kernels/plugin.h"
#include "delegates/onednn/dnnl_runtime.h"
#include "delegates/onednn/fused_ops.h"
#include "delegates/onednn/fusion_chain.h"
#include "delegates/onednn/layout_flow.h"
#include "delegates/onednn/quantized_chain.h"
#include "delegates/onednn/quantized_ops.h"

namespace brisk::onednn {
namespace {

// Options::precision asks for "bf16" (the ops_quantized plugin checks the names): the
// convolutions and linear layers run in bf16, where the CPU has bf16 arithmetic (AVX512_BF16, which AMX
// CPUs have too). Elsewhere oneDNN would emulate it, slower than fp32: they stay fp32,
// with one warning.
bool runsBf16(const DelegateContext& ctx) {
  const auto& p = ctx.options.precision;
  if (std::find(p.begin(), p.end(), "bf16") == p.end()) return false;
  static const bool native = __builtin_cpu_supports("avx512bf16");
  if (!native) {
    LOG_FIRST_N(WARNING, 1) << "brisk: " << ctx.model
                            << ": precision bf16 needs a CPU with AVX512_BF16; the onednn delegate's convolutions and "
                               "linear layers run in fp32";
  }
  return native;
}

// Measured on an AVX2 machine (AMD Zen 3, 1 thread): oneDNN's matmul lost to MKL's sgemm
// on mlp at 64 rows (torch's oneDNN 3.12: 762 vs 650 us; oneDNN 3.2's gemm:jit:f32 was
// 2-3x slower still), and brisk's packed GEMM (ops_cpu) beats MKL there at every row
// count. On AVX-512 machines MKL's path for AMD stays on AVX2 and re-packs the weight
// each call. So linear layers go to oneDNN by default only where AVX-512 is there to
// use: chosen by instruction set, never by vendor.
bool hasAvx512() { return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"); }

// The channel block of oneDNN's blocked layout on this CPU, as oneDNN itself sees it
// (ONEDNN_MAX_CPU_ISA included): 16 where its AVX-512 kernels run, else 8 (nChw8c is
// what its AVX2 kernels take).
int64_t channelBlock() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
  return (isa & avx512) == avx512 ? 16 : 8;
}

// oneDNN's int8 kernels sum uint8 x int8 products with VNNI's vpdpbusd (AVX512_VNNI,
// AVX-VNNI, AMX CPUs). Without it they pair products in vpmaddubsw, whose int16 sums
// saturate with full-range weights such as PT2E's (-128..127), so the result would not
// be the program's: there the quantized chains keep the program's float ops.
bool hasVnni() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto has = [isa](dnnl::cpu_isa want) { return (isa & static_cast<unsigned>(want)) == static_cast<unsigned>(want); };
  return has(dnnl::cpu_isa::avx512_core_vnni) || has(dnnl::cpu_isa::avx2_vnni);
}

// The backend's plugin options (BRISK_PLUGIN below registers them).
struct BackendOptions {
  PluginOption<bool> linear;
  PluginOption<int64_t> min_rows;
  PluginOption<int64_t> min_macs;
  PluginOption<bool> depthwise;
  PluginOption<bool> blocked;
  PluginOption<bool> bf16_stem;
  PluginOption<bool> int8;
  PluginOption<bool> int8_depthwise;
  PluginOption<bool> int8_autotune;
};

class OneDnnBackend final : public DelegateBackend {
 public:
  explicit OneDnnBackend(BackendOptions o) : o_(std::move(o)) {}

  std::vector<std::vector<const Node*>> claim(const Block& block, const DelegateContext& ctx) const override {
    const bool linear = o_.linear.get(ctx.options);
    std::unordered_set<const Node*> taken;
    std::vector<std::vector<const Node*>> groups;
    // PT2E's quantized chains first: their anchors would otherwise be claimed as float
    // chains (on the float weights folded from the int8 ones).
    if (o_.int8.get(ctx.options)) {
      for (const Node* n : block.nodes()) {
        if (taken.count(n)) continue;
        std::vector<const Node*> group;
        if (std::optional<QuantizedChain> chain = growQuantizedChain(*n, taken)) {
          group = chain->nodes;
        } else if (std::optional<QuantizedMaxPool> pool = growQuantizedMaxPool(*n, taken)) {
          group = pool->nodes;
        } else {
          continue;
        }
        if (!runsInt8(ctx)) break;
        taken.insert(group.begin(), group.end());
        groups.push_back(std::move(group));
      }
    }
    // Then the 1x1 -> depthwise pairs, in order: visited last to first, the depthwise
    // convolution (itself an anchor) would be claimed alone before its 1x1 is reached.
    // Such a chain never takes a residual add, so this leaves the adds to the loop below.
    if (o_.depthwise.get(ctx.options)) {
      for (const Node* n : block.nodes()) {
        if (taken.count(n)) continue;
        std::optional<FusionChain> chain = growChain(*n, taken);
        if (!chain || !chain->dw) continue;
        taken.insert(chain->nodes.begin(), chain->nodes.end());
        groups.push_back(chain->nodes);
      }
    }
    // Last node first: of two convolutions feeding one residual add, the one computed
    // later takes the add (the other's result is ready by then), so a chain never waits
    // on a node after it.
    for (auto it = block.nodes().rbegin(); it != block.nodes().rend(); ++it) {
      const Node* n = *it;
      if (taken.count(n)) continue;
      std::optional<FusionChain> chain = growChain(*n, taken);
      if (chain && chain->dw) {  // fuse_depthwise is off: the chain ends before the depthwise conv
        const auto dw = std::find(chain->nodes.begin(), chain->nodes.end(), chain->dw);
        chain = parseChain({chain->nodes.begin(), dw});
      }
      if (!chain || (chain->anchor == Anchor::kLinear && !linear)) continue;
      taken.insert(chain->nodes.begin(), chain->nodes.end());
      groups.push_back(chain->nodes);
    }
    return groups;
  }

  std::unique_ptr<CompiledPartition> compile(const Partition& p, const DelegateContext& ctx) const override {
    const Node& node = p.node;
    if (node.outputs().size() != 1) return nullptr;
    std::string why;
    const std::vector<const Node*> nodes(node.block(0)->nodes().begin(), node.block(0)->nodes().end());
    if (isQuantizedPartition(node)) {
      if (std::optional<QuantizedMaxPool> pool = parseQuantizedMaxPool(nodes))
        return compileQuantizedMaxPool(*pool, p, readersTakeNhwc(node.output(0)));
      std::optional<QuantizedChain> q = parseQuantizedChain(nodes, &why);
      if (!q) throw std::runtime_error("not a quantized chain this backend runs: " + why);
      if (q->body.anchor == Anchor::kLinear) return compileQuantizedLinear(*q, p);
      const Int8ConvOptions int8{o_.int8_depthwise.get(ctx.options), o_.int8_autotune.get(ctx.options)};
      return compileQuantizedConv(*q, p, readersTakeNhwc(node.output(0)), int8);
    }
    std::optional<FusionChain> chain = parseChain(nodes, &why);
    if (!chain) throw std::runtime_error("not a chain this backend runs: " + why);
    if (chain->anchor == Anchor::kLinear) {
      // In bf16 every row count runs in bf16: brisk's small GEMM is fp32, and at a few
      // rows a linear layer is bound by its weight's bytes, which bf16 halves
      // (MobileNetV2's 1280 -> 1000 classifier at one row, Zen 4, in the model with its
      // weight cold: 153 -> about 123 us).
      const bool bf16 = runsBf16(ctx);
      return compileLinear(*chain, p,
                           LinearOptions{bf16 ? 1 : o_.min_rows.get(ctx.options), o_.min_macs.get(ctx.options), bf16});
    }
    ConvOptions o;
    o.nhwc_output = readersTakeNhwc(node.output(0));
    const bool bf16_mode = runsBf16(ctx), stem_bf16 = o_.bf16_stem.get(ctx.options);
    o.bf16 = bf16_mode && computesBf16(node, stem_bf16);
    if (o.bf16) {
      o.bf16_output = flowsInBf16(node.output(0), stem_bf16);
      o.bf16_input = flowsInBf16(chain->nodes[0]->input(0), stem_bf16);
      o.bf16_other = chain->add && flowsInBf16(chain->add->input(chain->add_other), stem_bf16);
    }
    // Not in bf16: there the blocked kernels measured no faster (mobilenet_v2, Zen 4,
    // one thread: b1 4.43 vs 4.33 ms, b8 31.9 vs 32.4) and the stem has none at all.
    // (An fp32 stem in bf16 mode stays NHWC too: its readers are not blocked.)
    if (o_.blocked.get(ctx.options) && !bf16_mode) {
      o.block = channelBlock();
      o.blocked_output = computesBlocked(node);
      o.blocked_exit = exitsBlocked(node);
      o.blocked_input = arrivesBlocked(chain->nodes[0]->input(0));
      o.blocked_other = chain->add && arrivesBlocked(chain->add->input(chain->add_other));
      if (o.blocked_other) o.other_channels = resultChannels(*chain->add->input(chain->add_other)->producer());
    }
    return compileConv(*chain, p, o);
  }

 private:
  static bool runsInt8(const DelegateContext& ctx) {
    static const bool vnni = hasVnni();
    if (!vnni) {
      LOG_FIRST_N(WARNING, 1) << "brisk: " << ctx.model
                              << ": this CPU has no VNNI, so PT2E's quantized convolutions and linear layers run in "
                                 "fp32 on their dequantized weights, as the program says";
    }
    return vnni;
  }

  BackendOptions o_;
};

}  // namespace
}  // namespace brisk::onednn

BRISK_PLUGIN(registrar) {
  brisk::onednn::checkLibrary();
  auto linear = registrar.option<bool>(
      "linear", brisk::onednn::hasAvx512(),
      "linear layers run on oneDNN's matmul (default: on CPUs with AVX-512; on AVX2 brisk's packed GEMM measured "
      "faster)");
  auto min_rows = registrar.option<int64_t>(
      "linear_min_rows", 9,
      "linear layers with fewer input rows than this run on brisk's kernels (its small GEMM) instead of oneDNN (fp32 "
      "only: in bf16 every row count runs on oneDNN)");
  auto min_macs = registrar.option<int64_t>(
      "linear_min_macs", brisk::onednn::LinearOptions{}.min_macs,
      "linear calls with fewer multiply-adds (rows x in x out) than this run on brisk's kernels: below it "
      "oneDNN's per-call cost outweighs its faster GEMM");
  auto depthwise = registrar.option<bool>(
      "fuse_depthwise", true,
      "a 1x1 convolution and the depthwise 3x3 convolution that alone reads it run as one partition, with "
      "oneDNN's fused depthwise kernel where it has one for the shape (MobileNet's expand + depthwise steps)");
  auto blocked = registrar.option<bool>(
      "blocked_layout", true,
      "a convolution result read only by other convolution partitions passes between them in oneDNN's blocked "
      "layout (nChw16c with AVX-512, else nChw8c) instead of NHWC");
  auto int8 = registrar.option<bool>(
      "int8", true,
      "PT2E programs (torchao's convert_pt2e): each dequantize -> convolution or linear layer [-> activation or "
      "residual add] [-> quantize] runs as one oneDNN int8 call on the program's int8 weights and scales, and "
      "dequantize -> max_pool2d -> quantize as uint8 max pooling, uint8 activations passing between them (CPUs "
      "with VNNI; elsewhere the program's float ops run)");
  auto int8_depthwise = registrar.option<bool>(
      "int8_depthwise", true,
      "PT2E's 3x3 depthwise int8 layers (quantized result, no residual add, at most a relu or hardtanh) run on "
      "brisk's own AVX-512 VNNI kernel, three taps per dot-product lane (CPUs with AVX-512 VNNI); off: oneDNN's");
  auto int8_autotune = registrar.option<bool>(
      "int8_autotune", true,
      "on the first call with an input shape, an int8 convolution times oneDNN's first-ranked kernel against its "
      "direct jit_int8 kernel (where that is another one) and keeps the faster; off: oneDNN's ranking (with "
      "jit_int8 preferred for stride-1 depthwise layers)");
  auto bf16_stem = registrar.option<bool>(
      "bf16_stem", false,
      "under precision bf16, a dense convolution over fewer than 8 input channels (an image stem) runs in bf16 "
      "too; off: it computes in fp32, since oneDNN's bf16 kernel for so few channels measured 2.4x its fp32 kernel "
      "(AVX512_BF16 without AMX)");
  registrar.delegate("onednn", std::make_shared<brisk::onednn::OneDnnBackend>(brisk::onednn::BackendOptions{
                                   linear, min_rows, min_macs, depthwise, blocked, bf16_stem, int8, int8_depthwise,
                                   int8_autotune}));
}
