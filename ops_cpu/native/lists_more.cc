// More TorchScript list ops, the ones torchvision's Swin window code scripts into:
// l[i] = v (aten::_set_item.t), l.copy() (aten::copy.t), l[a:b:c] (aten::slice.t) and
// sum(l) (aten::sum.int / .float / .bool), with the interpreter's semantics (Python's
// index normalisation and slice rules, the same error messages).
#include <ATen/core/List.h>

#include <cstdint>
#include <limits>
#include <stdexcept>

#include "ops_cpu/native/common.h"

namespace brisk::ops_cpu::native {
namespace {

template <typename F>
void reg(PluginRegistrar& r, const char* key, F f) {
  r.native(key, [f, key](KernelBuildContext&) { return lambda(f, key); });
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

template <typename T>
T sumOf(const c10::IValue& v);
template <>
int64_t sumOf<int64_t>(const c10::IValue& v) {
  int64_t s = 0;
  for (const c10::IValue& e : v.toListRef()) s += e.toInt();
  return s;
}
template <>
double sumOf<double>(const c10::IValue& v) {
  double s = 0;
  for (const c10::IValue& e : v.toListRef()) s += e.toDouble();
  return s;
}

}  // namespace

void registerListMoreKernels(PluginRegistrar& r) {
  // Mutates the list in place (every holder sees the new element) and returns it.
  reg(r, "aten::_set_item.t", [](KernelContext& ctx) {
    c10::List<c10::IValue> list = ctx.input(0).toList();
    const int64_t n = static_cast<int64_t>(list.size());
    const int64_t idx = ctx.input(1).toInt();
    const int64_t i = idx < 0 ? idx + n : idx;
    if (i < 0 || i >= n) throw std::out_of_range("list index out of range");
    list.set(i, ctx.input(2));
    ctx.output(0) = ctx.input(0);
  });
  // A shallow copy: a new list holding the same elements.
  reg(r, "aten::copy.t", [](KernelContext& ctx) { ctx.output(0) = ctx.input(0).toList().copy(); });
  reg(r, "aten::slice.t", sliceList);
  reg(r, "aten::sum.int", [](KernelContext& ctx) { ctx.output(0) = sumOf<int64_t>(ctx.input(0)); });
  reg(r, "aten::sum.float", [](KernelContext& ctx) { ctx.output(0) = sumOf<double>(ctx.input(0)); });
  // sum of a bool list counts the true elements (an int), as the interpreter does.
  reg(r, "aten::sum.bool", [](KernelContext& ctx) {
    int64_t s = 0;
    for (const c10::IValue& e : ctx.input(0).toListRef()) s += e.toBool() ? 1 : 0;
    ctx.output(0) = s;
  });
}

}  // namespace brisk::ops_cpu::native
