#include "core/common/error.h"

#include <c10/util/Exception.h>

namespace brisk {
namespace {

std::string compose(const Error::Where& w, const std::string& message) {
  std::string out;
  if (!w.model.empty()) out += "model '" + w.model + "'";
  if (!w.node.empty()) out += (out.empty() ? "" : ", ") + std::string("node ") + w.node;
  if (!w.op.empty()) out += (out.empty() ? "" : ", ") + std::string("op ") + w.op;
  if (!out.empty()) out += ": ";
  return oneLine(out + message);
}

// torch's zip reader (caffe2 PyTorchStreamReader over miniz) ends every failure with
// "This is an internal miniz error. If you are seeing this error, ... corrupted" and more
// advice: the cause is the file, not miniz. Keep miniz's own reason, say it plainly.
std::string plainZipMessage(std::string m) {
  static const std::string kAdvice = ". This is an internal miniz error";
  static const std::string kPrefix = "PytorchStreamReader failed reading zip archive: ";
  const size_t advice = m.find(kAdvice);
  if (advice == std::string::npos) return m;
  m.resize(advice);
  const size_t prefix = m.find(kPrefix);
  if (prefix == std::string::npos) return m + " (the zip archive is damaged or truncated)";
  const std::string reason = m.substr(prefix + kPrefix.size());
  return m.substr(0, prefix) + "not a readable zip archive (" + reason + "): the file is damaged or truncated";
}

}  // namespace

Error::Error(Where where, const std::string& message)
    : std::runtime_error(compose(where, message)),
      where_(std::move(where)),
      message_(message) {}

Error Error::withModel(const std::string& model) const {
  Where w = where_;
  if (w.model.empty()) w.model = model;
  return Error(w, message_);
}

Error Error::withNode(const std::string& node, const std::string& op) const {
  Where w = where_;
  if (w.node.empty()) {
    w.node = node;
    w.op = op;
  }
  return Error(w, message_);
}

std::string oneLine(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool space = false;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string describeException(const std::exception& e) {
  // c10 errors append a C++ backtrace to what(); users need the first part only.
  if (auto* c10e = dynamic_cast<const c10::Error*>(&e)) return plainZipMessage(oneLine(c10e->what_without_backtrace()));
  return plainZipMessage(oneLine(e.what()));
}

}  // namespace brisk
