// Dict ops (d[k], d[k] = v, keys/values/items, len, `k in d`, d.get). Dicts are graph
// values shared by reference, exactly as in the interpreter: aten::_set_item mutates
// the dict every holder sees. c10::Dict keeps insertion order, so keys/values/items
// list in the same order as the interpreter's.
//
// TorchScript registers each op once per key type (str, int, bool, float, complex,
// Tensor); the implementations work on the generic dict (IValue keys hash by value,
// tensors by identity, as in the interpreter), so one kernel serves every overload.
#include <ATen/core/Dict.h>
#include <ATen/core/List.h>
#include <ATen/core/jit_type.h>

#include <string>

#include "ops_cpu/native/common.h"

namespace brisk::ops_cpu::native {
namespace {

template <typename F>
void reg(PluginRegistrar& r, const std::string& key, F f) {
  r.native(key, [f, key](KernelBuildContext&) { return lambda(f, key); });
}

// The interpreter's message for a missing key (register_prim_ops.cpp's dictIndex).
[[noreturn]] void keyError(const c10::IValue& key) { TORCH_CHECK(false, "KeyError: ", key); }

void getItem(KernelContext& ctx) {
  const c10::impl::GenericDict d = ctx.input(0).toGenericDict();
  auto it = d.find(ctx.input(1));
  if (it == d.end()) keyError(ctx.input(1));
  ctx.output(0) = it->value();
}

// d.get(k) -> value or None; d.get(k, default).
void get(KernelContext& ctx) {
  const c10::impl::GenericDict d = ctx.input(0).toGenericDict();
  auto it = d.find(ctx.input(1));
  ctx.output(0) = it == d.end() ? c10::IValue() : it->value();
}
void getDefault(KernelContext& ctx) {
  const c10::impl::GenericDict d = ctx.input(0).toGenericDict();
  auto it = d.find(ctx.input(1));
  ctx.output(0) = it == d.end() ? ctx.input(2) : it->value();
}

void setItem(KernelContext& ctx) {
  c10::impl::GenericDict d = ctx.input(0).toGenericDict();
  d.insert_or_assign(ctx.input(1), ctx.input(2));
}

void len(KernelContext& ctx) { ctx.output(0) = static_cast<int64_t>(ctx.input(0).toGenericDict().size()); }

void contains(KernelContext& ctx) { ctx.output(0) = ctx.input(0).toGenericDict().contains(ctx.input(1)); }

// New lists typed like the interpreter's (str[] for a Dict(str, t)'s keys, ...), so
// later list ops and the caller see the same element types.
void keys(KernelContext& ctx) {
  const c10::impl::GenericDict d = ctx.input(0).toGenericDict();
  c10::impl::GenericList out(d.keyType());
  out.reserve(d.size());
  for (const auto& e : d) out.push_back(e.key());
  ctx.output(0) = std::move(out);
}

void values(KernelContext& ctx) {
  const c10::impl::GenericDict d = ctx.input(0).toGenericDict();
  c10::impl::GenericList out(d.valueType());
  out.reserve(d.size());
  for (const auto& e : d) out.push_back(e.value());
  ctx.output(0) = std::move(out);
}

void items(KernelContext& ctx) {
  const c10::impl::GenericDict d = ctx.input(0).toGenericDict();
  c10::impl::GenericList out(c10::TupleType::create({d.keyType(), d.valueType()}));
  out.reserve(d.size());
  for (const auto& e : d) out.push_back(c10::ivalue::Tuple::create(e.key(), e.value()));
  ctx.output(0) = std::move(out);
}

}  // namespace

void registerDictKernels(PluginRegistrar& r) {
  for (const char* k : {"str", "int", "bool", "float", "complex", "Tensor"}) {
    const std::string key(k);
    reg(r, "aten::__getitem__.Dict_" + key, getItem);
    reg(r, "aten::get." + key, get);
    reg(r, "aten::get.default_" + key, getDefault);
    reg(r, "aten::_set_item." + key, setItem);
    reg(r, "aten::len.Dict_" + key, len);
    reg(r, "aten::__contains__." + key, contains);
    reg(r, "aten::keys." + key, keys);
    reg(r, "aten::values." + key, values);
    reg(r, "aten::items." + key, items);
  }
}

}  // namespace brisk::ops_cpu::native
