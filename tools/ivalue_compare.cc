#include "tools/ivalue_compare.h"

#include <ATen/ATen.h>

#include <cmath>
#include <sstream>

namespace brisk {

std::string compareIValues(const c10::IValue& a, const c10::IValue& e, Tolerance tol, const std::string& path) {
  if (a.tagKind() != e.tagKind()) return path + ": got " + a.tagKind() + ", expected " + e.tagKind();
  if (e.isTensor()) {
    const at::Tensor& x = a.toTensor();
    const at::Tensor& y = e.toTensor();
    if (x.scalar_type() != y.scalar_type())
      return path + ": dtype " + c10::toString(x.scalar_type()) + " vs " + c10::toString(y.scalar_type());
    if (x.sizes() != y.sizes()) {
      std::ostringstream os;
      os << path << ": shape " << x.sizes() << " vs " << y.sizes();
      return os.str();
    }
    if (x.numel() == 0) return "";
    if (x.is_floating_point() || x.is_complex()) {
      double atol = tol.atol;
      if (tol.atol_scale > 0) atol += tol.atol_scale * at::nan_to_num(y.abs(), 0, 0, 0).max().item<double>();
      if (at::allclose(x, y, tol.rtol, atol, /*equal_nan=*/true)) return "";
      std::ostringstream os;
      os << path << ": max abs diff " << (x - y).abs().max().item<double>() << " (rtol " << tol.rtol << ", atol "
         << atol << ")";
      return os.str();
    }
    return at::equal(x, y) ? "" : path + ": integer/bool tensors differ";
  }
  if (e.isTuple() || e.isList()) {
    std::vector<c10::IValue> xs, ys;
    if (e.isTuple()) {
      xs = a.toTupleRef().elements().vec();
      ys = e.toTupleRef().elements().vec();
    } else {
      xs = a.toList().vec();
      ys = e.toList().vec();
    }
    if (xs.size() != ys.size())
      return path + ": " + std::to_string(xs.size()) + " elements vs " + std::to_string(ys.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      std::string d = compareIValues(xs[i], ys[i], tol, path + "[" + std::to_string(i) + "]");
      if (!d.empty()) return d;
    }
    return "";
  }
  if (e.isGenericDict()) {
    auto xd = a.toGenericDict();
    auto yd = e.toGenericDict();
    if (xd.size() != yd.size()) return path + ": dict sizes differ";
    for (const auto& kv : yd) {
      auto it = xd.find(kv.key());
      std::ostringstream key;
      key << kv.key();
      if (it == xd.end()) return path + ": missing key " + key.str();
      std::string d = compareIValues(it->value(), kv.value(), tol, path + "[" + key.str() + "]");
      if (!d.empty()) return d;
    }
    return "";
  }
  if (e.isDouble()) {
    double x = a.toDouble(), y = e.toDouble();
    return std::abs(x - y) <= tol.atol + tol.rtol * std::abs(y) ? "" : path + ": floats differ";
  }
  return a == e ? "" : path + ": values differ";
}

std::string summarizeIValue(const c10::IValue& v) {
  std::ostringstream os;
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (!t.defined()) return "Tensor(undefined)";
    os << "Tensor" << t.sizes() << " " << c10::toString(t.scalar_type());
    if (t.numel() > 0) {
      const at::Tensor plain = t.is_quantized() ? t.dequantize() : t;
      if (plain.is_complex()) {  // both parts: a real sum would drop the imaginary one
        const c10::complex<double> z = plain.to(at::kComplexDouble).sum().item<c10::complex<double>>();
        os << " sum=" << z.real() << (z.imag() < 0 ? "-" : "+") << std::abs(z.imag()) << "j";
      } else {
        os << " sum=" << plain.to(at::kDouble).sum().item<double>();
      }
    }
  } else if (v.isTuple() || v.isList()) {
    std::vector<c10::IValue> xs = v.isTuple() ? v.toTupleRef().elements().vec() : v.toList().vec();
    // A NamedTuple shows its type and field names, as Python prints it.
    std::vector<std::string_view> fields;
    if (v.isTuple())
      if (auto tt = v.toTupleRef().type(); tt && tt->schema()) {
        os << tt->name()->name();
        fields = tt->names().value_or(std::vector<std::string_view>{});
      }
    os << (v.isTuple() ? "(" : "[");
    for (size_t i = 0; i < xs.size(); ++i) {
      os << (i ? ", " : "");
      if (i < fields.size()) os << fields[i] << "=";
      os << summarizeIValue(xs[i]);
    }
    os << (v.isTuple() ? ")" : "]");
  } else if (v.isGenericDict()) {
    os << "{";
    bool first = true;
    for (const auto& kv : v.toGenericDict()) {
      os << (first ? "" : ", ") << kv.key() << ": " << summarizeIValue(kv.value());
      first = false;
    }
    os << "}";
  } else {
    os << v;
  }
  return os.str();
}

}  // namespace brisk
