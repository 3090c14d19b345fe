#pragma once
// The one JSON writer (escaping, numbers, objects, arrays) of brisk's reports: the profile
// report, the stats table and the CLI's --json outputs. Minimal and hand-written.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace brisk::report::json {

inline std::string str(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

inline std::string num(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

inline std::string num(long long v) { return std::to_string(v); }
inline std::string boolean(bool b) { return b ? "true" : "false"; }

// Builds {"k": v, ...} from already-encoded values.
class Object {
 public:
  Object& add(const std::string& key, const std::string& encoded) {
    body_ += (body_.empty() ? "" : ", ") + str(key) + ": " + encoded;
    return *this;
  }
  std::string done() const { return "{" + body_ + "}"; }

 private:
  std::string body_;
};

inline std::string array(const std::vector<std::string>& encoded) {
  std::string out = "[";
  for (size_t i = 0; i < encoded.size(); ++i) out += (i ? ", " : "") + encoded[i];
  return out + "]";
}

}  // namespace brisk::report::json
