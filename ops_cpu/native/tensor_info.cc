// Tensor metadata queries (sizes, dtype, device, flags) and global-mode queries. Each
// reads the same field the interpreter's op reads.
#include <ATen/autocast_mode.h>
#include <c10/core/GradMode.h>

#include <stdexcept>

#include "ops_cpu/native/common.h"

namespace brisk::ops_cpu::native {
namespace {

template <typename F>
void reg(PluginRegistrar& r, const char* key, F f) {
  r.native(key, [f, key](KernelBuildContext&) { return lambda(f, key); });
}

}  // namespace

void registerTensorInfoKernels(PluginRegistrar& r) {
  reg(r, "aten::size", [](KernelContext& ctx) { ctx.output(0) = c10::IValue(ctx.tensor(0).sizes()); });
  reg(r, "aten::size.int",
      [](KernelContext& ctx) { ctx.output(0) = ctx.tensor(0).size(ctx.input(1).toInt()); });
  // sym_size.int(Tensor self, int dim) -> SymInt: a PT2 program's dynamic size; brisk runs
  // concrete sizes, so it is size.int.
  reg(r, "aten::sym_size.int",
      [](KernelContext& ctx) { ctx.output(0) = ctx.tensor(0).size(ctx.input(1).toInt()); });
  reg(r, "aten::dim", [](KernelContext& ctx) { ctx.output(0) = static_cast<int64_t>(ctx.tensor(0).dim()); });
  reg(r, "aten::numel", [](KernelContext& ctx) { ctx.output(0) = static_cast<int64_t>(ctx.tensor(0).numel()); });
  reg(r, "aten::len.Tensor", [](KernelContext& ctx) {
    const at::Tensor& t = ctx.tensor(0);
    if (t.dim() == 0) throw std::runtime_error("len() of a 0-d tensor");
    ctx.output(0) = t.sizes()[0];
  });
  reg(r, "prim::device", [](KernelContext& ctx) { ctx.output(0) = ctx.tensor(0).device(); });
  reg(r, "prim::dtype",
      [](KernelContext& ctx) { ctx.output(0) = static_cast<int64_t>(ctx.tensor(0).scalar_type()); });
  reg(r, "prim::layout", [](KernelContext& ctx) { ctx.output(0) = ctx.tensor(0).layout(); });
  reg(r, "prim::is_cuda", [](KernelContext& ctx) { ctx.output(0) = ctx.tensor(0).is_cuda(); });
  reg(r, "prim::is_nested", [](KernelContext& ctx) { ctx.output(0) = ctx.tensor(0).is_nested(); });
  reg(r, "prim::requires_grad", [](KernelContext& ctx) { ctx.output(0) = ctx.tensor(0).requires_grad(); });
  reg(r, "aten::is_floating_point",
      [](KernelContext& ctx) { ctx.output(0) = ctx.tensor(0).is_floating_point(); });
  // prim::type(Device) -> str: the device type's lower-case name. CPU's string is made
  // once (no allocation per run); other devices are named as the interpreter does.
  reg(r, "prim::type", [](KernelContext& ctx) {
    static const c10::IValue kCpu(std::string("cpu"));
    const c10::DeviceType t = ctx.input(0).toDevice().type();
    ctx.output(0) = t == c10::DeviceType::CPU ? kCpu : c10::IValue(c10::DeviceTypeName(t, /*lower_case=*/true));
  });
  reg(r, "aten::is_grad_enabled", [](KernelContext& ctx) { ctx.output(0) = c10::GradMode::is_enabled(); });
  // The device-less op reads CUDA's autocast state (what torch.is_autocast_enabled()
  // means without an argument).
  reg(r, "aten::is_autocast_enabled",
      [](KernelContext& ctx) { ctx.output(0) = at::autocast::is_autocast_enabled(at::kCUDA); });
}

}  // namespace brisk::ops_cpu::native
