#include "core/frontend/pt2/schema.h"

#include <cmath>
#include <limits>
#include <utility>

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

namespace {

template <typename T, size_t N>
T lookup(const std::pair<int64_t, T> (&table)[N], int64_t v, const char* what) {
  for (const auto& [key, value] : table)
    if (key == v) return value;
  throw Error(std::string("unknown ") + what + " " + std::to_string(v) + " in the program");
}

}  // namespace

c10::ScalarType scalarType(int64_t v) {
  using S = c10::ScalarType;
  static constexpr std::pair<int64_t, S> kTable[] = {
      {1, S::Byte},           {2, S::Char},           {3, S::Short},          {4, S::Int},
      {5, S::Long},           {6, S::Half},           {7, S::Float},          {8, S::Double},
      {9, S::ComplexHalf},    {10, S::ComplexFloat},  {11, S::ComplexDouble}, {12, S::Bool},
      {13, S::BFloat16},      {28, S::UInt16},        {29, S::Float8_e4m3fn}, {30, S::Float8_e5m2},
      {31, S::Float8_e4m3fnuz}, {32, S::Float8_e5m2fnuz}, {34, S::UInt32},    {35, S::UInt64},
  };
  return lookup(kTable, v, "dtype");
}

c10::MemoryFormat memoryFormat(int64_t v) {
  using M = c10::MemoryFormat;
  static constexpr std::pair<int64_t, M> kTable[] = {
      {1, M::Contiguous}, {2, M::ChannelsLast}, {3, M::ChannelsLast3d}, {4, M::Preserve}};
  return lookup(kTable, v, "memory format");
}

c10::Layout layout(int64_t v) {
  using L = c10::Layout;
  static constexpr std::pair<int64_t, L> kTable[] = {{1, L::Sparse},    {2, L::SparseCsr}, {3, L::SparseCsc},
                                                     {4, L::SparseBsr}, {5, L::SparseBsc}, {6, L::Mkldnn},
                                                     {7, L::Strided}};
  return lookup(kTable, v, "layout");
}

void checkJsonDepth(std::string_view text, const std::string& what) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw Error(what + " nests deeper than " + std::to_string(kMaxJsonDepth) + " levels (corrupt archive)");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
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
