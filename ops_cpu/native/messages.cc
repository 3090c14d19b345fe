// aten::format and aten::warn: building and emitting user messages (TorchScript's
// f-strings / str.format and warnings.warn), with the interpreter's semantics.
#include <c10/util/Exception.h>

#include <atomic>
#include <sstream>

#include "ops_cpu/native/common.h"

namespace brisk::ops_cpu::native {
namespace {

// The interpreter's format(): each "{}" in the format string takes the next argument,
// printed with IValue's operator<<; other braces are copied; missing arguments are an
// error, extra ones are ignored.
std::unique_ptr<Kernel> format(KernelBuildContext& b) {
  const size_t num_inputs = b.node().inputs().size();
  if (num_inputs < 1) return nullptr;
  return lambda(
      [num_inputs](KernelContext& ctx) {
        const std::string& fmt = ctx.input(0).toStringRef();
        std::stringstream ss;
        for (size_t begin = 0, used = 0;; ++used) {
          const size_t loc = fmt.find("{}", begin);
          if (loc == std::string::npos) {
            ss << fmt.substr(begin);
            break;
          }
          ss << fmt.substr(begin, loc - begin);
          TORCH_CHECK(used + 1 < num_inputs, "Too few arguments for format string: ", fmt);
          ss << ctx.input(used + 1);
          begin = loc + 2;
        }
        ctx.output(0) = ss.str();
      },
      "aten::format");
}

// aten::warn(str message, int stacklevel=2): the interpreter implements it as an
// instruction (its registered operator only throws), so the fallback kernel cannot
// run it. Like the interpreter, each warn node warns once (per loaded model, from
// whichever thread gets there first), attributed to the node's source line when the
// model has source (verbatim, as the interpreter does), else a plain TORCH_WARN.
class WarnKernel final : public Kernel {
 public:
  explicit WarnKernel(const Node& n) : Kernel(KernelKind::kNative) {
    if (const std::optional<SourceLocation>& at = n.frontend().source) {
      file_ = at->file;
      line_ = at->line;
      has_location_ = true;
    }
  }

  void run(KernelContext& ctx) const override {
    // The once-only flag is load-time state shared by all runs (as the interpreter's
    // per-Code set of warned nodes), not per-run state.
    if (warned_.exchange(true, std::memory_order_relaxed)) return;
    const std::string& msg = ctx.input(0).toStringRef();
    if (has_location_)
      c10::warn(
          c10::Warning(c10::UserWarning{}, c10::SourceLocation{"", file_.c_str(), line_}, msg, /*verbatim=*/true));
    else
      TORCH_WARN(msg);
  }
  std::string describe() const override { return "c10::warn (once per node)"; }

 private:
  std::string file_;
  uint32_t line_ = 0;
  bool has_location_ = false;
  mutable std::atomic<bool> warned_{false};
};

}  // namespace

void registerMessageKernels(PluginRegistrar& r) {
  r.native("aten::format", format);
  r.native("aten::warn", [](KernelBuildContext& b) -> std::unique_ptr<Kernel> {
    if (b.node().inputs().size() != 2) return nullptr;
    return std::make_unique<WarnKernel>(b.node());
  });
}

}  // namespace brisk::ops_cpu::native
