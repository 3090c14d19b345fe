// List ops. Lists are graph values shared by reference, exactly as in the interpreter:
// aten::append.t mutates its input list (and returns it); aten::list.t and
// aten::add.t make new lists.
#include <ATen/core/List.h>

#include <stdexcept>
#include <string>

#include "ops_cpu/native/common.h"

namespace brisk::ops_cpu::native {
namespace {

template <typename F>
void reg(PluginRegistrar& r, const char* key, F f) {
  r.native(key, [f, key](KernelBuildContext&) { return lambda(f, key); });
}

const c10::IValue& getItem(c10::ArrayRef<c10::IValue> list, int64_t idx) {
  const int64_t n = static_cast<int64_t>(list.size());
  const int64_t i = idx < 0 ? idx + n : idx;
  if (i < 0 || i >= n) throw std::out_of_range("list index out of range");
  return list[i];
}

template <typename T>
T elem(const c10::IValue& v);
template <>
int64_t elem<int64_t>(const c10::IValue& v) {
  return v.toInt();
}
template <>
double elem<double>(const c10::IValue& v) {
  return v.toDouble();
}
template <>
bool elem<bool>(const c10::IValue& v) {
  return v.toBool();
}

template <typename T>
bool listEq(const c10::IValue& a, const c10::IValue& b) {
  c10::ArrayRef<c10::IValue> x = a.toListRef(), y = b.toListRef();
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (!(elem<T>(x[i]) == elem<T>(y[i]))) return false;
  return true;
}

bool strListEq(const c10::IValue& a, const c10::IValue& b) {
  c10::ArrayRef<c10::IValue> x = a.toListRef(), y = b.toListRef();
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i].toStringRef() != y[i].toStringRef()) return false;
  return true;
}

template <typename T>
void registerTyped(PluginRegistrar& r, const char* eq, const char* ne, const char* contains) {
  reg(r, eq, [](KernelContext& ctx) { ctx.output(0) = listEq<T>(ctx.input(0), ctx.input(1)); });
  reg(r, ne, [](KernelContext& ctx) { ctx.output(0) = !listEq<T>(ctx.input(0), ctx.input(1)); });
  if (contains)
    reg(r, contains, [](KernelContext& ctx) {
      const T key = elem<T>(ctx.input(1));
      bool found = false;
      for (const c10::IValue& v : ctx.input(0).toListRef())
        if (elem<T>(v) == key) {
          found = true;
          break;
        }
      ctx.output(0) = found;
    });
}

template <typename T>
void registerAllAny(PluginRegistrar& r, const char* all, const char* any) {
  reg(r, all, [](KernelContext& ctx) {
    bool result = true;
    for (const c10::IValue& v : ctx.input(0).toListRef())
      if (!elem<T>(v)) {
        result = false;
        break;
      }
    ctx.output(0) = result;
  });
  reg(r, any, [](KernelContext& ctx) {
    bool result = false;
    for (const c10::IValue& v : ctx.input(0).toListRef())
      if (elem<T>(v)) {
        result = true;
        break;
      }
    ctx.output(0) = result;
  });
}

}  // namespace

void registerListKernels(PluginRegistrar& r) {
  auto get_item = [](KernelContext& ctx) {
    ctx.output(0) = getItem(ctx.input(0).toListRef(), ctx.input(1).toInt());
  };
  reg(r, "aten::__getitem__.t", get_item);
  reg(r, "aten::select.t", get_item);
  reg(r, "aten::len.t", [](KernelContext& ctx) {
    ctx.output(0) = static_cast<int64_t>(ctx.input(0).toListRef().size());
  });
  reg(r, "aten::len.any", [](KernelContext& ctx) {
    ctx.output(0) = static_cast<int64_t>(ctx.input(0).toListRef().size());
  });
  // Mutates the list in place (every holder of the list sees the new element) and
  // returns the same list.
  reg(r, "aten::append.t", [](KernelContext& ctx) {
    c10::List<c10::IValue> list = ctx.input(0).toList();
    list.push_back(ctx.input(1));
    ctx.output(0) = ctx.input(0);
  });
  reg(r, "aten::list.t", [](KernelContext& ctx) { ctx.output(0) = ctx.input(0).toList().copy(); });
  reg(r, "aten::add.t", [](KernelContext& ctx) {
    c10::List<c10::IValue> ret = ctx.input(0).toList().copy();
    ret.append(ctx.input(1).toList());
    ctx.output(0) = std::move(ret);
  });
  registerTyped<int64_t>(r, "aten::eq.int_list", "aten::ne.int_list", "aten::__contains__.int_list");
  registerTyped<double>(r, "aten::eq.float_list", "aten::ne.float_list", "aten::__contains__.float_list");
  registerTyped<bool>(r, "aten::eq.bool_list", "aten::ne.bool_list", nullptr);
  reg(r, "aten::eq.str_list", [](KernelContext& ctx) { ctx.output(0) = strListEq(ctx.input(0), ctx.input(1)); });
  reg(r, "aten::ne.str_list", [](KernelContext& ctx) { ctx.output(0) = !strListEq(ctx.input(0), ctx.input(1)); });
  reg(r, "aten::__contains__.str_list", [](KernelContext& ctx) {
    const std::string& key = ctx.input(1).toStringRef();
    bool found = false;
    for (const c10::IValue& v : ctx.input(0).toListRef())
      if (v.toStringRef() == key) {
        found = true;
        break;
      }
    ctx.output(0) = found;
  });
  registerAllAny<bool>(r, "aten::all.bool", "aten::any.bool");
  registerAllAny<int64_t>(r, "aten::all.int", "aten::any.int");
  registerAllAny<double>(r, "aten::all.float", "aten::any.float");
}

}  // namespace brisk::ops_cpu::native
