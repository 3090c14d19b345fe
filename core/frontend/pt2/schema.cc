#include "core/frontend/pt2/schema.h"

#include <cmath>
#include <limits>

#include "core/common/error.h"

namespace brisk::pt2 {

void checkSchemaVersion(const Json& program) {
  const Json& v = objectAt(program, "schema_version", "the program");
  int64_t major = intOf(at(v, "major", "schema_version"), "schema_version.major");
  int64_t minor = intOf(at(v, "minor", "schema_version"), "schema_version.minor");
  if (major != kSchemaMajor)
    throw Error("unsupported torch.export schema version " + std::to_string(major) + "." + std::to_string(minor) +
                " (this brisk reads major version " + std::to_string(kSchemaMajor) + ")");
}

c10::ScalarType scalarType(int64_t v) {
  using S = c10::ScalarType;
  switch (v) {
    case 1: return S::Byte;
    case 2: return S::Char;
    case 3: return S::Short;
    case 4: return S::Int;
    case 5: return S::Long;
    case 6: return S::Half;
    case 7: return S::Float;
    case 8: return S::Double;
    case 9: return S::ComplexHalf;
    case 10: return S::ComplexFloat;
    case 11: return S::ComplexDouble;
    case 12: return S::Bool;
    case 13: return S::BFloat16;
    case 28: return S::UInt16;
    case 29: return S::Float8_e4m3fn;
    case 30: return S::Float8_e5m2;
    case 31: return S::Float8_e4m3fnuz;
    case 32: return S::Float8_e5m2fnuz;
    case 34: return S::UInt32;
    case 35: return S::UInt64;
    default: throw Error("unknown dtype " + std::to_string(v) + " in the program");
  }
}

c10::MemoryFormat memoryFormat(int64_t v) {
  switch (v) {
    case 1: return c10::MemoryFormat::Contiguous;
    case 2: return c10::MemoryFormat::ChannelsLast;
    case 3: return c10::MemoryFormat::ChannelsLast3d;
    case 4: return c10::MemoryFormat::Preserve;
    default: throw Error("unknown memory format " + std::to_string(v) + " in the program");
  }
}

c10::Layout layout(int64_t v) {
  switch (v) {
    case 1: return c10::Layout::Sparse;
    case 2: return c10::Layout::SparseCsr;
    case 3: return c10::Layout::SparseCsc;
    case 4: return c10::Layout::SparseBsr;
    case 5: return c10::Layout::SparseBsc;
    case 6: return c10::Layout::Mkldnn;
    case 7: return c10::Layout::Strided;
    default: throw Error("unknown layout " + std::to_string(v) + " in the program");
  }
}

const Json& at(const Json& j, const char* key, const std::string& what) {
  if (!j.is_object()) throw Error(what + " is not a JSON object");
  auto it = j.find(key);
  if (it == j.end()) throw Error(what + " has no '" + key + "'");
  return *it;
}

const Json& arrayAt(const Json& j, const char* key, const std::string& what) {
  const Json& v = at(j, key, what);
  if (!v.is_array()) throw Error(what + "." + key + " is not a list");
  return v;
}

const Json& objectAt(const Json& j, const char* key, const std::string& what) {
  const Json& v = at(j, key, what);
  if (!v.is_object()) throw Error(what + "." + key + " is not an object");
  return v;
}

std::string stringAt(const Json& j, const char* key, const std::string& what) {
  const Json& v = at(j, key, what);
  if (!v.is_string()) throw Error(what + "." + key + " is not a string");
  return v.get<std::string>();
}

int64_t intOf(const Json& j, const std::string& what) {
  if (!j.is_number_integer()) throw Error(what + " is not an integer");
  return j.get<int64_t>();
}

double floatOf(const Json& j, const std::string& what) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  }
  throw Error(what + " is not a float");
}

const std::string& unionKind(const Json& j, const std::string& what) {
  if (!j.is_object() || j.size() != 1) throw Error(what + " is not a one-key union object");
  return j.begin().key();
}

int64_t concreteInt(const Json& symint, const std::string& what) {
  if (unionKind(symint, what) != "as_int") throw Error(what + " is symbolic; a concrete size is expected here");
  return intOf(symint.begin().value(), what);
}

}  // namespace brisk::pt2
