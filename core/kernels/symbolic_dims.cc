#include "core/kernels/symbolic_dims.h"

#include <algorithm>
#include <cctype>

namespace brisk {

// Recursive descent over srepr text: Name(args...) where an arg is a call, a quoted
// string, a number, or key=value (ignored: Symbol's assumptions).
class SymbolicExprParser {
 public:
  SymbolicExprParser(const std::string& s, std::vector<std::string>& symbols, SymbolicExpr& out)
      : s_(s), symbols_(symbols), out_(out) {}

  // Appends the steps of the call at the cursor; returns its text, or nullopt.
  std::optional<std::string> call() {
    skipSpace();
    const std::string name = identifier();
    if (name.empty() || !eat('(')) return std::nullopt;
    if (name == "Symbol") {
      skipSpace();
      std::string sym;
      if (!quoted(sym)) return std::nullopt;
      skipToClose();
      auto it = std::find(symbols_.begin(), symbols_.end(), sym);
      const int index = static_cast<int>(it - symbols_.begin());
      if (it == symbols_.end()) symbols_.push_back(sym);
      out_.steps_.push_back({SymbolicExpr::Op::kSymbol, index});
      if (std::find(out_.reads_.begin(), out_.reads_.end(), index) == out_.reads_.end()) out_.reads_.push_back(index);
      return sym;
    }
    if (name == "Integer") {
      skipSpace();
      size_t used = 0;
      int64_t v = 0;
      try {
        v = std::stoll(s_.substr(pos_), &used);
      } catch (const std::exception&) {
        return std::nullopt;
      }
      pos_ += used;
      if (!eat(')')) return std::nullopt;
      out_.steps_.push_back({SymbolicExpr::Op::kConst, v});
      return std::to_string(v);
    }
    static const std::pair<const char*, SymbolicExpr::Op> kOps[] = {
        {"Add", SymbolicExpr::Op::kAdd},           {"Mul", SymbolicExpr::Op::kMul},
        {"FloorDiv", SymbolicExpr::Op::kFloorDiv}, {"Mod", SymbolicExpr::Op::kMod},
        {"Neg", SymbolicExpr::Op::kNeg}};
    const auto* op = std::find_if(std::begin(kOps), std::end(kOps), [&](const auto& o) { return name == o.first; });
    if (op == std::end(kOps)) return std::nullopt;
    std::vector<std::string> parts;
    for (;;) {
      auto part = call();
      if (!part) return std::nullopt;
      parts.push_back(*part);
      skipSpace();
      if (eat(')')) break;
      if (!eat(',')) return std::nullopt;
    }
    const size_t n = parts.size();
    const SymbolicExpr::Op o = op->second;
    if ((o == SymbolicExpr::Op::kNeg && n != 1) || ((o == SymbolicExpr::Op::kFloorDiv || o == SymbolicExpr::Op::kMod) && n != 2) ||
        ((o == SymbolicExpr::Op::kAdd || o == SymbolicExpr::Op::kMul) && n < 2))
      return std::nullopt;
    out_.steps_.push_back({o, static_cast<int64_t>(n)});
    if (o == SymbolicExpr::Op::kNeg) return "-(" + parts[0] + ")";
    const char* sep = o == SymbolicExpr::Op::kAdd ? " + " : o == SymbolicExpr::Op::kMul ? "*" : o == SymbolicExpr::Op::kFloorDiv ? " // " : " % ";
    std::string text;
    for (size_t i = 0; i < n; ++i) text += (i ? sep : "") + (n > 1 && parts[i].find(' ') != std::string::npos ? "(" + parts[i] + ")" : parts[i]);
    return text;
  }

  bool atEnd() {
    skipSpace();
    return pos_ == s_.size();
  }

 private:
  void skipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    skipSpace();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::string identifier() {
    const size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    return s_.substr(start, pos_ - start);
  }
  bool quoted(std::string& out) {
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) return false;
    const char q = s_[pos_++];
    const size_t end = s_.find(q, pos_);
    if (end == std::string::npos) return false;
    out = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return !out.empty();
  }
  // Past the ')' closing the current call (Symbol's keyword arguments hold no parens).
  void skipToClose() {
    const size_t end = s_.find(')', pos_);
    pos_ = end == std::string::npos ? s_.size() + 1 : end + 1;
  }

  const std::string& s_;
  size_t pos_ = 0;
  std::vector<std::string>& symbols_;
  SymbolicExpr& out_;
};

std::optional<SymbolicExpr> SymbolicExpr::parse(const std::string& srepr, std::vector<std::string>& symbols) {
  if (srepr.size() > 4096) return std::nullopt;  // no real program's dims come near; bounds the recursion
  std::vector<std::string> tentative = symbols;  // symbols of an expression we give up on are not kept
  SymbolicExpr e;
  SymbolicExprParser p(srepr, tentative, e);
  auto text = p.call();
  if (!text || !p.atEnd()) return std::nullopt;
  size_t depth = 0, deepest = 0;  // eval's stack holds 64
  for (const Step& st : e.steps_) {
    depth = st.op == Op::kConst || st.op == Op::kSymbol ? depth + 1
            : st.op == Op::kNeg                         ? depth
            : st.op == Op::kFloorDiv || st.op == Op::kMod ? depth - 1
                                                          : depth - static_cast<size_t>(st.arg) + 1;
    deepest = std::max(deepest, depth);
  }
  if (deepest > 64) return std::nullopt;
  e.text_ = *text;
  if (e.steps_.size() == 1 && e.steps_[0].op == Op::kSymbol) e.bare_ = static_cast<int>(e.steps_[0].arg);
  symbols = std::move(tentative);
  return e;
}

int64_t SymbolicExpr::eval(const int64_t* values) const {
  int64_t stack[64];
  size_t top = 0;
  for (const Step& s : steps_) {
    switch (s.op) {
      case Op::kConst: stack[top++] = s.arg; break;
      case Op::kSymbol: stack[top++] = values[s.arg]; break;
      case Op::kNeg: stack[top - 1] = -stack[top - 1]; break;
      case Op::kAdd:
      case Op::kMul: {
        int64_t acc = s.op == Op::kAdd ? 0 : 1;
        for (int64_t i = 0; i < s.arg; ++i) acc = s.op == Op::kAdd ? acc + stack[top - 1 - i] : acc * stack[top - 1 - i];
        top -= static_cast<size_t>(s.arg);
        stack[top++] = acc;
        break;
      }
      case Op::kFloorDiv:
      case Op::kMod: {
        const int64_t b = stack[--top], a = stack[top - 1];
        if (b == 0) return INT64_MIN;  // matches no size: reported as a mismatch
        const int64_t q = a / b - ((a % b != 0) && ((a < 0) != (b < 0)));  // floor, as sympy's
        stack[top - 1] = s.op == Op::kFloorDiv ? q : a - q * b;
        break;
      }
    }
  }
  return stack[0];
}

}  // namespace brisk
