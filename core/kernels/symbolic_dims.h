#pragma once
// The relations a torch.export program records between its inputs' dynamic dims. Each
// symbolic size in the archive is a sympy expression over the program's symbols, written
// as sympy's srepr: "Symbol('s17', positive=True, integer=True)" for a dim shared by
// several inputs, "Add(Symbol('s17', ...), Integer(1))" for a derived one. ep.module()
// guards every one of them (`y.size()[0] == x.size()[0]`, `z.size()[0] == 1 + ...`); so
// does brisk, with the brisk::check_input_dims node the PT2 frontend adds.
//
// Supported forms: Symbol, Integer, Add, Mul, FloorDiv, Mod, and Neg. An expression using
// anything else is not checked (parse() returns nullopt); its dims keep their range check.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace brisk {

// One expression, compiled to postfix steps over a symbol table.
class SymbolicExpr {
 public:
  // Symbols are added to `symbols` (by name) as the parse meets them.
  static std::optional<SymbolicExpr> parse(const std::string& srepr, std::vector<std::string>& symbols);

  // The symbol's index when the expression is a bare symbol, else -1.
  int bareSymbol() const { return bare_; }
  // The symbols it reads.
  const std::vector<int>& reads() const { return reads_; }
  // Its value with symbol i = values[i] (every symbol it reads must be bound).
  int64_t eval(const int64_t* values) const;
  // "s17 + 1", for messages.
  const std::string& text() const { return text_; }

 private:
  enum class Op : uint8_t { kConst, kSymbol, kAdd, kMul, kFloorDiv, kMod, kNeg };
  struct Step {
    Op op;
    int64_t arg;  // kConst: value; kSymbol: index; kAdd/kMul: operand count
  };
  std::vector<Step> steps_;
  std::vector<int> reads_;
  int bare_ = -1;
  std::string text_;
  friend class SymbolicExprParser;
};

}  // namespace brisk
