#pragma once
// brisk::Error — the one exception type brisk throws for anything a user can cause
// (bad model file, bad inputs, an op nothing can run, a plugin built for another ABI).
// Its message always names what is known of model, node and op, on one line, so the
// CLI can print it as is and exit 2.
#include <stdexcept>
#include <string>

namespace brisk {

class Error : public std::runtime_error {
 public:
  struct Where {
    std::string model;  // model file or name
    std::string node;   // "#12 %x.3 = aten::conv2d(...)" style description
    std::string op;     // "aten::conv2d.default"
  };

  Error(Where where, const std::string& message);
  explicit Error(const std::string& message) : Error(Where{}, message) {}

  const Where& where() const { return where_; }
  const std::string& message() const { return message_; }
  bool namesNode() const { return !where_.node.empty(); }

  // The same error with the model (and, when unset, node/op) filled in; used when an
  // error crosses a layer that knows more context.
  Error withModel(const std::string& model) const;
  Error withNode(const std::string& node, const std::string& op) const;

 private:
  Where where_;
  std::string message_;
};

// Turns any exception's message into one line (c10 errors carry backtraces and
// newlines). Used wherever a foreign exception is wrapped into brisk::Error.
std::string oneLine(const std::string& text);
std::string describeException(const std::exception& e);

}  // namespace brisk

#define BRISK_CHECK(cond, ...)                                   \
  do {                                                           \
    if (!(cond)) throw ::brisk::Error(::brisk::detail::cat(__VA_ARGS__)); \
  } while (0)

#include <sstream>
namespace brisk::detail {
template <typename... T>
std::string cat(const T&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}
}  // namespace brisk::detail
