// torch.export's bookkeeping ops: sym_numel (a dynamic program's element count; brisk
// runs concrete sizes, so it is numel) and _assert_tensor_metadata (the export-time
// dtype / device / layout / sizes / strides of a tensor, asserted before a .to()).
//
// The assert is kept and checked rather than removed at load: brisk's input checks
// cover the program's inputs only, while the asserted tensor may be any intermediate
// (a view, a tensor from a custom op) whose metadata nothing else checks. The check
// compares a few fields and allocates nothing unless it fails; a failure raises
// brisk::Error, which the runtime names with this node.
#include <ATen/core/Tensor.h>

#include <sstream>

#include "core/common/error.h"
#include "ops_cpu/native/common.h"

namespace brisk::ops_cpu::native {
namespace {

// An optional SymInt[] argument, constant (PT2 programs give literal lists) or None.
struct OptInts {
  bool given = false;
  std::vector<int64_t> v;
};

std::optional<OptInts> optIntsArg(const Node& n, size_t i) {
  if (!isConst(n, i)) return std::nullopt;
  const c10::IValue& c = constant(n, i);
  OptInts a;
  if (c.isNone()) return a;
  if (!c.isIntList()) return std::nullopt;
  a.given = true;
  a.v = c.toIntVector();
  return a;
}

std::string str(c10::IntArrayRef v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

struct MetadataAssert {
  OptInts sizes, strides;
  std::optional<c10::ScalarType> dtype;
  std::optional<c10::Device> device;
  std::optional<c10::Layout> layout;

  void check(const at::Tensor& t) const {
    if (sizes.given && t.sizes() != c10::IntArrayRef(sizes.v))
      throw Error("_assert_tensor_metadata: the tensor has sizes " + str(t.sizes()) + ", the program expects " +
                  str(sizes.v));
    if (strides.given && t.strides() != c10::IntArrayRef(strides.v))
      throw Error("_assert_tensor_metadata: the tensor has strides " + str(t.strides()) + ", the program expects " +
                  str(strides.v));
    if (dtype && t.scalar_type() != *dtype)
      throw Error(std::string("_assert_tensor_metadata: the tensor has dtype ") + c10::toString(t.scalar_type()) +
                  ", the program expects " + c10::toString(*dtype));
    if (device && t.device() != *device)
      throw Error("_assert_tensor_metadata: the tensor is on " + t.device().str() + ", the program expects " +
                  device->str());
    if (layout && t.layout() != *layout) {
      std::ostringstream os;
      os << "_assert_tensor_metadata: the tensor has layout " << t.layout() << ", the program expects " << *layout;
      throw Error(os.str());
    }
  }
};

// _assert_tensor_metadata(Tensor a, SymInt[]? size=None, SymInt[]? stride=None,
//   ScalarType? dtype=None, *, Device? device=None, Layout? layout=None) -> ()
// Non-constant arguments (never seen in an exported program) are declined.
std::unique_ptr<Kernel> assertTensorMetadata(KernelBuildContext& b) {
  const Node& n = b.node();
  if (n.inputs().size() != 6) return nullptr;
  auto sizes = optIntsArg(n, 1), strides = optIntsArg(n, 2);
  if (!sizes || !strides) return nullptr;
  for (size_t i = 3; i < 6; ++i)
    if (!isConst(n, i)) return nullptr;
  MetadataAssert a;
  a.sizes = *sizes;
  a.strides = *strides;
  const c10::IValue &dt = constant(n, 3), &dev = constant(n, 4), &lay = constant(n, 5);
  if ((!dt.isNone() && !dt.isInt()) || (!dev.isNone() && !dev.isDevice()) || (!lay.isNone() && !lay.isInt()))
    return nullptr;
  if (dt.isInt()) a.dtype = static_cast<c10::ScalarType>(dt.toInt());
  if (dev.isDevice()) a.device = dev.toDevice();
  if (lay.isInt()) a.layout = static_cast<c10::Layout>(lay.toInt());
  return lambda([a = std::move(a)](KernelContext& ctx) { a.check(ctx.tensor(0)); },
                "brisk metadata check (_assert_tensor_metadata)");
}

}  // namespace

void registerPt2BookkeepingKernels(PluginRegistrar& r) {
  r.native("aten::sym_numel", [](KernelBuildContext&) {
    return lambda([](KernelContext& ctx) { ctx.output(0) = static_cast<int64_t>(ctx.tensor(0).numel()); },
                  "numel (sym_numel)");
  });
  r.native("aten::_assert_tensor_metadata", assertTensorMetadata);
}

}  // namespace brisk::ops_cpu::native
