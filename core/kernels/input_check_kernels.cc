// brisk::check_input_sizes: the sizes a PT2 program was exported for (static sizes,
// and the ranges of its dynamic dims), checked on every run as ep.module() does, so an
// input the program was not exported for is an error naming it rather than a wrong
// result or a kernel's shape error deep in the graph. The PT2 frontend adds one per
// user input tensor, with attributes "input" (name), "min" and "max" (per dim; max -1
// = unbounded). brisk::check_dict_keys does the same for a pytree dict input's keys.
#include <ATen/core/Dict.h>
#include <ATen/core/List.h>

#include <algorithm>

#include <sstream>

#include "core/common/error.h"
#include "core/graph/graph.h"
#include "core/kernels/core_kernel_sets.h"
#include "core/kernels/kernel_registry.h"
#include "core/kernels/symbolic_dims.h"

namespace brisk {
namespace {

std::unique_ptr<Kernel> makeCheckInputSizes(KernelBuildContext& b) {
  const auto& attrs = b.node().attributes();
  auto name = attrs.find("input"), min = attrs.find("min"), max = attrs.find("max");
  if (name == attrs.end() || min == attrs.end() || max == attrs.end()) return nullptr;
  std::vector<int64_t> lo = min->second.toIntVector(), hi = max->second.toIntVector();
  if (lo.size() != hi.size()) return nullptr;
  return functionKernel(
      KernelKind::kNative,
      [input = name->second.toStringRef(), lo = std::move(lo), hi = std::move(hi)](KernelContext& ctx) {
        const at::Tensor& t = ctx.tensor(0);
        if (t.dim() != static_cast<int64_t>(lo.size()))
          throw Error("input '" + input + "': expected rank " + std::to_string(lo.size()) +
                      " (as exported), got rank " + std::to_string(t.dim()));
        for (size_t d = 0; d < lo.size(); ++d) {
          const int64_t s = t.size(static_cast<int64_t>(d));
          if (s >= lo[d] && (hi[d] < 0 || s <= hi[d])) continue;
          if (lo[d] == hi[d])
            throw Error("input '" + input + "': dim " + std::to_string(d) + " is " + std::to_string(s) +
                        ", but the program was exported for " + std::to_string(lo[d]) + " (a static size)");
          throw Error("input '" + input + "': dim " + std::to_string(d) + " is " + std::to_string(s) +
                      ", outside the program's range [" + std::to_string(lo[d]) + ", " +
                      (hi[d] < 0 ? std::string("inf") : std::to_string(hi[d])) + "]");
        }
      },
      "checks input sizes");
}

// brisk::check_constant_input(value, exported): an input export specialized on (a
// number or string the caller passes, e.g. `scale=3.0`) must be the exported value.
std::unique_ptr<Kernel> makeCheckConstantInput(KernelBuildContext& b) {
  const auto& attrs = b.node().attributes();
  auto name = attrs.find("input");
  if (name == attrs.end() || !b.inputIsConstant(1)) return nullptr;
  return functionKernel(
      KernelKind::kNative,
      [input = name->second.toStringRef(), exported = b.constantInput(1)](KernelContext& ctx) {
        const c10::IValue& got = ctx.input(0);
        // Python compares 3 == 3.0 as equal; so does ep.module()'s check.
        auto real = [](const c10::IValue& v) { return v.isInt() || v.isDouble() || v.isBool(); };
        const bool same = real(got) && real(exported) ? got.toScalar().toDouble() == exported.toScalar().toDouble()
                                                      : got == exported;
        if (!same) {
          std::stringstream ss;
          ss << "input '" << input << "' is " << got << ", but the program was exported for " << exported
             << " (export specialized it to a constant)";
          throw Error(ss.str());
        }
      },
      "checks a constant input");
}

// brisk::check_dict_keys(dict): a pytree dict input holds exactly the keys the program
// was exported with (attribute "keys"); the frontend's lookups would skip any other.
std::unique_ptr<Kernel> makeCheckDictKeys(KernelBuildContext& b) {
  const auto& attrs = b.node().attributes();
  auto name = attrs.find("input"), keys = attrs.find("keys");
  if (name == attrs.end() || keys == attrs.end() || !keys->second.isList()) return nullptr;
  std::vector<std::string> expected;
  for (const c10::IValue& k : keys->second.toListRef()) expected.push_back(k.toStringRef());
  return functionKernel(
      KernelKind::kNative,
      [input = name->second.toStringRef(), expected = std::move(expected)](KernelContext& ctx) {
        const c10::IValue& v = ctx.input(0);
        if (!v.isGenericDict()) return;  // the signature check names a wrong type
        const c10::impl::GenericDict d = v.toGenericDict();
        if (d.size() == expected.size()) return;  // and the lookups find every one
        for (const auto& entry : d) {
          const std::string key = entry.key().isString() ? entry.key().toStringRef() : "";
          if (std::find(expected.begin(), expected.end(), key) != expected.end()) continue;
          std::string names;
          for (const std::string& e : expected) names += (names.empty() ? "'" : ", '") + e + "'";
          throw Error("input '" + input + "': unexpected key '" + key + "' (the program takes the keys " + names +
                      ")");
        }
      },
      "checks a dict input's keys");
}

// brisk::check_input_dims(tensors...): the relations between dynamic dims (symbolic_dims.h).
// Attributes: "names" (one per node input), and per checked dim "input" (node input
// index), "dim" and "expr" (the archive's srepr). Bare symbols bind first (the first
// input to carry one sets it, the others must agree), then derived dims are compared
// with their expression's value.
std::unique_ptr<Kernel> makeCheckInputDims(KernelBuildContext& b) {
  const auto& attrs = b.node().attributes();
  auto names = attrs.find("names"), input = attrs.find("input"), dim = attrs.find("dim"), expr = attrs.find("expr");
  if (names == attrs.end() || input == attrs.end() || dim == attrs.end() || expr == attrs.end()) return nullptr;
  struct Entry {
    size_t input;
    int64_t dim;
    SymbolicExpr expr;
  };
  std::vector<std::string> symbols, input_names;
  for (const c10::IValue& n : names->second.toListRef()) input_names.push_back(n.toStringRef());
  const std::vector<int64_t> inputs = input->second.toIntVector(), dims = dim->second.toIntVector();
  const auto& exprs = expr->second.toListRef();
  if (inputs.size() != dims.size() || exprs.size() != dims.size()) return nullptr;
  std::vector<Entry> bare, derived;
  for (size_t i = 0; i < dims.size(); ++i) {
    auto e = SymbolicExpr::parse(exprs[i].toStringRef(), symbols);
    if (!e || static_cast<size_t>(inputs[i]) >= input_names.size()) continue;  // not checked (symbolic_dims.h)
    (e->bareSymbol() >= 0 ? bare : derived).push_back(Entry{static_cast<size_t>(inputs[i]), dims[i], std::move(*e)});
  }
  constexpr size_t kMaxSymbols = 64;
  if (symbols.size() > kMaxSymbols || (bare.empty() && derived.empty())) return nullptr;
  return functionKernel(
      KernelKind::kNative,
      [input_names = std::move(input_names), bare = std::move(bare), derived = std::move(derived),
       symbols = std::move(symbols)](KernelContext& ctx) {
        int64_t value[kMaxSymbols];
        uint32_t bound_by[kMaxSymbols];  // index into `bare` + 1; 0 = unbound
        std::fill(bound_by, bound_by + symbols.size(), 0u);
        auto size = [&](const Entry& e) { return ctx.tensor(e.input).size(e.dim); };
        auto where = [&](const Entry& e) {
          return "input '" + input_names[e.input] + "' dim " + std::to_string(e.dim);
        };
        for (size_t i = 0; i < bare.size(); ++i) {
          const Entry& e = bare[i];
          const int s = e.expr.bareSymbol();
          const int64_t got = size(e);
          if (!bound_by[s]) {
            value[s] = got;
            bound_by[s] = static_cast<uint32_t>(i + 1);
          } else if (value[s] != got) {
            const Entry& first = bare[static_cast<size_t>(bound_by[s]) - 1];
            throw Error(where(e) + " is " + std::to_string(got) + ", but the program requires it to equal " +
                        where(first) + " (" + std::to_string(value[s]) + "): both are " + e.expr.text());
          }
        }
        for (const Entry& e : derived) {
          bool all = true;
          for (int s : e.expr.reads()) all = all && bound_by[s];
          if (!all) continue;  // a symbol no input carries alone: left to the kernels
          const int64_t want = e.expr.eval(value), got = size(e);
          if (want != got) {
            std::string binding;
            for (int s : e.expr.reads()) binding += (binding.empty() ? "" : ", ") + symbols[s] + " = " + std::to_string(value[s]);
            throw Error(where(e) + " is " + std::to_string(got) + ", but the program requires " + e.expr.text() +
                        " = " + std::to_string(want) + " (" + binding + ")");
          }
        }
      },
      "checks relations between dynamic dims");
}

void registerInputCheckKernels(Registries& r) {
  r.native.add("brisk::check_input_sizes", makeCheckInputSizes, "core");
  r.native.add("brisk::check_constant_input", makeCheckConstantInput, "core");
  r.native.add("brisk::check_dict_keys", makeCheckDictKeys, "core");
  r.native.add("brisk::check_input_dims", makeCheckInputDims, "core");
}

const CoreKernelSetRegistration input_check_kernels(registerInputCheckKernels);

}  // namespace
}  // namespace brisk
