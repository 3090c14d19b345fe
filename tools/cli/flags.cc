#include "tools/cli/flags.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace brisk::cli {

int64_t parseInt(const std::string& flag, const std::string& text, int64_t min_value, int64_t max_value) {
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size())
    throw UsageError("--" + flag + " expects an integer, got '" + text + "'");
  // strtoll clamps what int64 cannot hold (ERANGE): out of range as well.
  if (errno == ERANGE || v < min_value || v > max_value)
    throw UsageError("--" + flag + " must be in [" + std::to_string(min_value) + ", " + std::to_string(max_value) +
                     "], got " + text);
  return v;
}

double parseDouble(const std::string& flag, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v))
    throw UsageError("--" + flag + " expects a number, got '" + text + "'");
  return v;
}

void FlagParser::addBool(const std::string& name, bool* target, const std::string& help) {
  addSwitch(name, target, true, help);
}

void FlagParser::addSwitch(const std::string& name, bool* target, bool value, const std::string& help) {
  flags_.push_back({name, "", help, [target, value](const std::string&) { *target = value; }});
}

void FlagParser::addInt(const std::string& name, int64_t* target, const std::string& metavar,
                        const std::string& help, int64_t min_value, int64_t max_value) {
  flags_.push_back({name, metavar, help,
                    [name, target, min_value, max_value](const std::string& v) {
                      *target = parseInt(name, v, min_value, max_value);
                    },
                    "[" + std::to_string(min_value) + ", " + std::to_string(max_value) + "]"});
}

void FlagParser::addDouble(const std::string& name, double* target, const std::string& metavar,
                           const std::string& help, double min_value, double max_value) {
  flags_.push_back({name, metavar, help, [name, target, min_value, max_value](const std::string& v) {
                      double x = parseDouble(name, v);
                      if (x < min_value || x > max_value) {
                        std::ostringstream os;
                        os << "--" << name << " must be in [" << min_value << ", " << max_value << "], got " << v;
                        throw UsageError(os.str());
                      }
                      *target = x;
                    },
                    [min_value, max_value] {
                      std::ostringstream os;
                      os << "[" << min_value << ", " << max_value << "]";
                      return os.str();
                    }()});
}

void FlagParser::addString(const std::string& name, std::string* target, const std::string& metavar,
                           const std::string& help, bool allow_empty) {
  flags_.push_back({name, metavar, help, [name, target, allow_empty](const std::string& v) {
                      if (v.empty() && !allow_empty) throw UsageError("--" + name + " expects a non-empty value");
                      *target = v;
                    }});
}

void FlagParser::addList(const std::string& name, std::vector<std::string>* target,
                         const std::string& metavar, const std::string& help) {
  flags_.push_back({name, metavar, help, [name, target](const std::string& v) {
                      if (v.empty()) throw UsageError("--" + name + " expects a non-empty value");
                      target->push_back(v);
                    }});
}

bool FlagParser::given(const std::string& name) const {
  return std::find(given_.begin(), given_.end(), name) != given_.end();
}

const FlagParser::Flag* FlagParser::find(const std::string& name) const {
  for (const Flag& f : flags_)
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<std::string> FlagParser::parse(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      positional.insert(positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (a.size() < 2 || a[0] != '-' || a == "-") {
      positional.push_back(a);
      continue;
    }
    if (a.rfind("--", 0) != 0) throw UsageError("unknown flag '" + a + "' (flags start with --)");
    std::string name = a.substr(2);
    std::string value;
    bool has_value = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    const Flag* f = find(name);
    if (!f) throw UsageError("unknown flag '--" + name + "'");
    if (f->metavar.empty()) {
      if (has_value) throw UsageError("--" + name + " takes no value");
    } else if (!has_value) {
      if (i + 1 >= args.size()) throw UsageError("--" + name + " expects a value (" + f->metavar + ")");
      value = args[++i];
    }
    f->set(value);
    given_.push_back(name);
  }
  return positional;
}

std::string FlagParser::usage() const {
  std::ostringstream os;
  for (const Flag& f : flags_) {
    std::string left = "  --" + f.name + (f.metavar.empty() ? "" : " " + f.metavar);
    os << left;
    if (left.size() < 28) os << std::string(28 - left.size(), ' ');
    else os << "\n" << std::string(28, ' ');
    os << f.help << (f.range.empty() ? "" : " " + f.range) << "\n";
  }
  return os.str();
}

}  // namespace brisk::cli
