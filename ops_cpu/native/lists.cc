// List ops. Lists are graph values shared by reference, exactly as in the interpreter:
// aten::append.t and aten::_set_item.t mutate their input list (and return it);
// aten::list.t, aten::copy.t, aten::add.t and aten::slice.t make new lists. Python's
// index normalisation and slice rules, with the interpreter's error messages.
#include <ATen/core/List.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "ops_cpu/native/common.h"

namespace brisk::ops_cpu::native {
namespace {

template <typename F>
void reg(PluginRegistrar& r, const char* key, F f) {
  r.native(key, [f, key](KernelBuildContext&) { return lambda(f, key); });
}

// Python's index into a list of n elements (negative counts from the end).
size_t listIndex(size_t size, int64_t idx) {
  const int64_t n = static_cast<int64_t>(size);
  const int64_t i = idx < 0 ? idx + n : idx;
  if (i < 0 || i >= n) throw std::out_of_range("list index out of range");
  return static_cast<size_t>(i);
}

const c10::IValue& getItem(c10::ArrayRef<c10::IValue> list, int64_t idx) { return list[listIndex(list.size(), idx)]; }

template <typename T>
bool listEq(const c10::IValue& a, const c10::IValue& b) {
  c10::ArrayRef<c10::IValue> x = a.toListRef(), y = b.toListRef();
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (!(x[i].to<T>() == y[i].to<T>())) return false;
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
      const T key = ctx.input(1).to<T>();
      bool found = false;
      for (const c10::IValue& v : ctx.input(0).toListRef())
        if (v.to<T>() == key) {
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
      if (!v.to<T>()) {
        result = false;
        break;
      }
    ctx.output(0) = result;
  });
  reg(r, any, [](KernelContext& ctx) {
    bool result = false;
    for (const c10::IValue& v : ctx.input(0).toListRef())
      if (v.to<T>()) {
        result = true;
        break;
      }
    ctx.output(0) = result;
  });
}

// Python's PySlice_AdjustIndices (the interpreter's slice_indices_adjust): clamps start
// and end into the list and returns how many elements the slice has.
int64_t adjustSlice(int64_t length, int64_t& start, int64_t& end, int64_t step) {
  if (start < 0) {
    start += length;
    if (start < 0) start = step < 0 ? -1 : 0;
  } else if (start >= length) {
    start = step < 0 ? length - 1 : length;
  }
  if (end < 0) {
    end += length;
    if (end < 0) end = step < 0 ? -1 : 0;
  } else if (end >= length) {
    end = step < 0 ? length - 1 : length;
  }
  if (step < 0) return end < start ? (start - end - 1) / (-step) + 1 : 0;
  return start < end ? (end - start - 1) / step + 1 : 0;
}

// list[start:end:step] as a new list of the same element type.
void sliceList(KernelContext& ctx) {
  const c10::List<c10::IValue> list = ctx.input(0).toList();
  const int64_t step = ctx.input(3).toInt();
  if (step == 0) throw std::runtime_error("List slice should have non-zero step");
  // Python's defaults: a negative step walks from the end down past the start.
  int64_t start = ctx.input(1).isNone() ? (step < 0 ? std::numeric_limits<int64_t>::max() : 0)
                                        : ctx.input(1).toInt();
  int64_t end = ctx.input(2).isNone()
                    ? (step < 0 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max())
                    : ctx.input(2).toInt();
  const int64_t n = adjustSlice(static_cast<int64_t>(list.size()), start, end, step);
  c10::List<c10::IValue> out(list.elementType());
  out.reserve(n);
  for (int64_t j = 0, i = start; j < n; ++j, i += step) out.push_back(list.get(i));
  ctx.output(0) = std::move(out);
}

// sum(l): element by element from 0, in order, as the interpreter adds; a bool list
// counts its true elements (an int).
template <typename T, typename R = T>
R sumOf(const c10::IValue& v) {
  R s = 0;
  for (const c10::IValue& e : v.toListRef()) s += static_cast<R>(e.to<T>());
  return s;
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
  // What torchvision's Swin window code scripts into: l[i] = v, l.copy(), l[a:b:c], sum(l).
  // Mutates the list in place (every holder sees the new element) and returns it.
  reg(r, "aten::_set_item.t", [](KernelContext& ctx) {
    c10::List<c10::IValue> list = ctx.input(0).toList();
    list.set(listIndex(list.size(), ctx.input(1).toInt()), ctx.input(2));
    ctx.output(0) = ctx.input(0);
  });
  // A shallow copy: a new list holding the same elements.
  reg(r, "aten::copy.t", [](KernelContext& ctx) { ctx.output(0) = ctx.input(0).toList().copy(); });
  reg(r, "aten::slice.t", sliceList);
  reg(r, "aten::sum.int", [](KernelContext& ctx) { ctx.output(0) = sumOf<int64_t>(ctx.input(0)); });
  reg(r, "aten::sum.float", [](KernelContext& ctx) { ctx.output(0) = sumOf<double>(ctx.input(0)); });
  reg(r, "aten::sum.bool", [](KernelContext& ctx) { ctx.output(0) = sumOf<bool, int64_t>(ctx.input(0)); });
}

}  // namespace brisk::ops_cpu::native
