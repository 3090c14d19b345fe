#pragma once
// The torch.export serialization schema's numbering (ExportedProgram JSON, schema
// 8.x): its enums are NOT c10's, so every dtype / memory format / layout read from a
// program goes through these tables. Also the JSON access helpers every PT2 file uses:
// a missing key or a wrong JSON type becomes one brisk::Error saying where.
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/ScalarType.h>

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace brisk::pt2 {

using Json = nlohmann::json;

// Major version of the schema this frontend reads; minor versions are compatible.
constexpr int64_t kSchemaMajor = 8;

// Throws brisk::Error naming the version when the program's major version differs.
void checkSchemaVersion(const Json& program);

c10::ScalarType scalarType(int64_t schema_value);
c10::MemoryFormat memoryFormat(int64_t schema_value);
c10::Layout layout(int64_t schema_value);

// How deep a PT2 JSON document (a program, a payload config, a pytree spec) may nest.
// Exported programs nest a few dozen levels (a torch.cond subgraph adds a dozen); the
// bound keeps every recursive walk of the document (nlohmann's copy and dump, the pytree
// and subgraph readers) far from the stack's end on a damaged file.
constexpr size_t kMaxJsonDepth = 512;

// Throws brisk::Error naming `what` when `text` nests arrays/objects deeper than
// kMaxJsonDepth. Call before Json::parse: the check is one pass without recursion.
void checkJsonDepth(std::string_view text, const std::string& what);

// j[key], which must exist; `what` names the enclosing object in the error.
const Json& at(const Json& j, const char* key, const std::string& what);
const Json& arrayAt(const Json& j, const char* key, const std::string& what);
const Json& objectAt(const Json& j, const char* key, const std::string& what);
std::string stringAt(const Json& j, const char* key, const std::string& what);
int64_t intOf(const Json& j, const std::string& what);
// A float as the serializer writes it: a number, or "Infinity" / "-Infinity" / "NaN".
double floatOf(const Json& j, const std::string& what);
// A union ({"as_x": payload}): its one key.
const std::string& unionKind(const Json& j, const std::string& what);
// A concrete SymInt ({"as_int": n}); a symbolic one is an error naming `what`.
int64_t concreteInt(const Json& symint, const std::string& what);

}  // namespace brisk::pt2
