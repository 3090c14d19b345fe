// Core's native kernels for the prim container ops the frontend leaves in graphs.
// They replace the JIT's boxed prim operators: no stack, no dispatcher.
#include <ATen/core/Dict.h>
#include <ATen/core/List.h>

#include "core/common/error.h"
#include "core/graph/graph.h"
#include "core/kernels/core_kernel_sets.h"
#include "core/kernels/kernel_registry.h"

namespace brisk {
namespace {

template <typename F>
std::unique_ptr<Kernel> lambda(F f, const char* what) {
  return functionKernel(KernelKind::kNative, std::move(f), what);
}

std::unique_ptr<Kernel> makeListConstruct(KernelBuildContext& b) {
  c10::TypePtr elem = b.node().output(0)->type()->expectRef<c10::ListType>().getElementType();
  switch (elem->kind()) {
    case c10::TypeKind::TensorType:
      return lambda(
          [](KernelContext& ctx) {
            c10::List<at::Tensor> list;
            list.reserve(ctx.numInputs());
            for (size_t i = 0; i < ctx.numInputs(); ++i) list.push_back(ctx.tensor(i));
            ctx.output(0) = std::move(list);
          },
          "TensorList construct");
    case c10::TypeKind::IntType:
      return lambda(
          [](KernelContext& ctx) {
            c10::List<int64_t> list;
            list.reserve(ctx.numInputs());
            for (size_t i = 0; i < ctx.numInputs(); ++i) list.push_back(ctx.input(i).toInt());
            ctx.output(0) = std::move(list);
          },
          "IntList construct");
    default:
      return lambda(
          [elem](KernelContext& ctx) {
            c10::impl::GenericList list(elem);
            list.reserve(ctx.numInputs());
            for (size_t i = 0; i < ctx.numInputs(); ++i) list.push_back(ctx.input(i));
            ctx.output(0) = std::move(list);
          },
          "GenericList construct");
  }
}

std::unique_ptr<Kernel> makeTupleConstruct(KernelBuildContext& b) {
  auto type = b.node().output(0)->type()->cast<c10::TupleType>();
  if (type && type->schema())  // a NamedTuple: the value carries its type (field names)
    return lambda(
        [type](KernelContext& ctx) {
          std::vector<c10::IValue> elems;
          elems.reserve(ctx.numInputs());
          for (size_t i = 0; i < ctx.numInputs(); ++i) elems.push_back(ctx.input(i));
          ctx.output(0) = c10::ivalue::Tuple::createNamed(std::move(elems), type);
        },
        "named tuple construct");
  return lambda(
      [](KernelContext& ctx) {
        const size_t n = ctx.numInputs();
        if (n == 2) {
          ctx.output(0) = c10::ivalue::Tuple::create(ctx.input(0), ctx.input(1));
          return;
        }
        std::vector<c10::IValue> elems;
        elems.reserve(n);
        for (size_t i = 0; i < n; ++i) elems.push_back(ctx.input(i));
        ctx.output(0) = c10::ivalue::Tuple::create(std::move(elems));
      },
      "tuple construct");
}

std::unique_ptr<Kernel> makeDictConstruct(KernelBuildContext& b) {
  const auto& type = b.node().output(0)->type()->expectRef<c10::DictType>();
  c10::TypePtr key = type.getKeyType(), value = type.getValueType();
  return lambda(
      [key, value](KernelContext& ctx) {
        c10::impl::GenericDict dict(key, value);
        dict.reserve(ctx.numInputs() / 2);
        for (size_t i = 0; i + 1 < ctx.numInputs(); i += 2)
          dict.insert_or_assign(ctx.input(i), ctx.input(i + 1));
        ctx.output(0) = std::move(dict);
      },
      "dict construct");
}

std::unique_ptr<Kernel> makeUnpack(KernelBuildContext& b) {
  const bool is_tuple = b.node().kind() == "prim::TupleUnpack";
  if (is_tuple)
    return lambda(
        [](KernelContext& ctx) {
          const auto& elems = ctx.input(0).toTupleRef().elements();
          TORCH_CHECK(elems.size() == ctx.numOutputs(), "expected a tuple of ", ctx.numOutputs(),
                      " elements, got ", elems.size());
          for (size_t i = 0; i < elems.size(); ++i) ctx.output(i) = elems[i];
        },
        "tuple unpack");
  return lambda(
      [](KernelContext& ctx) {
        const auto& list = ctx.input(0).toListRef();
        TORCH_CHECK(list.size() == ctx.numOutputs(), "expected a list of ", ctx.numOutputs(),
                    " elements, got ", list.size());
        for (size_t i = 0; i < list.size(); ++i) ctx.output(i) = list[i];
      },
      "list unpack");
}

std::unique_ptr<Kernel> makeTupleIndex(KernelBuildContext&) {
  return lambda(
      [](KernelContext& ctx) {
        const auto& elems = ctx.input(0).toTupleRef().elements();
        int64_t i = ctx.input(1).toInt();
        const int64_t n = static_cast<int64_t>(elems.size());
        if (i < 0) i += n;
        TORCH_CHECK(i >= 0 && i < n, "tuple index ", ctx.input(1).toInt(), " out of range");
        ctx.output(0) = elems[i];
      },
      "tuple index");
}

// unchecked_cast only changes the static type; the value passes through.
std::unique_ptr<Kernel> makeUncheckedCast(KernelBuildContext&) {
  return lambda([](KernelContext& ctx) { ctx.output(0) = ctx.input(0); }, "pass-through");
}

// prim::RaiseException(str msg, str? cls): a model's own `raise`. The JIT operator's
// exception carries only the class name in what(); this kernel reports what the
// interpreter prints last, "builtins.RuntimeError: <message>", as a brisk::Error (the
// executor adds model, node and op).
std::unique_ptr<Kernel> makeRaiseException(KernelBuildContext& b) {
  if (b.node().inputs().empty()) return nullptr;
  return lambda(
      [](KernelContext& ctx) {
        std::string text = ctx.input(0).isString() ? ctx.input(0).toStringRef() : "exception";
        if (ctx.numInputs() > 1 && ctx.input(1).isString()) text = ctx.input(1).toStringRef() + ": " + text;
        throw Error(text);
      },
      "raises the model's exception");
}

void registerPrimKernels(Registries& r) {
  r.native.add("prim::ListConstruct", makeListConstruct, "core");
  r.native.add("prim::TupleConstruct", makeTupleConstruct, "core");
  r.native.add("prim::DictConstruct", makeDictConstruct, "core");
  r.native.add("prim::TupleUnpack", makeUnpack, "core");
  r.native.add("prim::ListUnpack", makeUnpack, "core");
  r.native.add("prim::TupleIndex", makeTupleIndex, "core");
  r.native.add("prim::unchecked_cast", makeUncheckedCast, "core");
  r.native.add("prim::RaiseException", makeRaiseException, "core");
}

const CoreKernelSetRegistration prim_kernels(registerPrimKernels);

}  // namespace

}  // namespace brisk
