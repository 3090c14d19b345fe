// SymbolicExpr: the sympy srepr forms a torch.export archive writes for its dynamic dims,
// parsed and evaluated as sympy does (floor division and modulo round toward -inf).
#include "core/kernels/symbolic_dims.h"

#include <gtest/gtest.h>

namespace brisk {
namespace {

const std::string kS17 = "Symbol('s17', positive=True, integer=True)";
const std::string kS3 = "Symbol('s3', positive=True, integer=True)";

TEST(SymbolicDims, BareSymbolsShareOneIndex) {
  std::vector<std::string> symbols;
  auto a = SymbolicExpr::parse(kS17, symbols);
  auto b = SymbolicExpr::parse(kS17, symbols);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->bareSymbol(), 0);
  EXPECT_EQ(b->bareSymbol(), 0);
  EXPECT_EQ(symbols, std::vector<std::string>{"s17"});
  EXPECT_EQ(a->text(), "s17");
}

TEST(SymbolicDims, DerivedExpressions) {
  std::vector<std::string> symbols;
  auto plus = SymbolicExpr::parse("Add(" + kS17 + ", Integer(1))", symbols);
  auto twice = SymbolicExpr::parse("Mul(Integer(2), " + kS17 + ", " + kS3 + ")", symbols);
  auto half = SymbolicExpr::parse("FloorDiv(Add(" + kS17 + ", Integer(-7)), Integer(2))", symbols);
  auto rest = SymbolicExpr::parse("Mod(Neg(" + kS3 + "), Integer(4))", symbols);
  ASSERT_TRUE(plus && twice && half && rest);
  EXPECT_EQ(plus->bareSymbol(), -1);
  EXPECT_EQ(plus->text(), "s17 + 1");
  EXPECT_EQ(symbols, (std::vector<std::string>{"s17", "s3"}));
  const int64_t values[] = {4, 5};  // s17, s3
  EXPECT_EQ(plus->eval(values), 5);
  EXPECT_EQ(twice->eval(values), 40);
  EXPECT_EQ(half->eval(values), -2);  // floor(-3 / 2)
  EXPECT_EQ(rest->eval(values), 3);   // -5 mod 4, sympy's sign
  EXPECT_EQ(twice->reads(), (std::vector<int>{0, 1}));
}

TEST(SymbolicDims, UnsupportedFormsAreNotChecked) {
  std::vector<std::string> symbols;
  for (const std::string& bad : {"Max(" + kS17 + ", Integer(2))", std::string("Symbol("), std::string("Integer(x)"),
                                 "Add(" + kS17 + ")", "FloorDiv(" + kS17 + ")", std::string(""),
                                 kS17 + " trailing", std::string(5000, '(')}) {
    EXPECT_FALSE(SymbolicExpr::parse(bad, symbols)) << bad;
  }
  EXPECT_TRUE(symbols.empty()) << "a refused expression adds no symbol";
  std::string deep = "Integer(1)";
  for (int i = 0; i < 70; ++i) deep = "Add(" + deep + ", Integer(1))";
  EXPECT_TRUE(SymbolicExpr::parse(deep, symbols));  // left-nested: the stack stays shallow
  std::string wide = "Add(";
  for (int i = 0; i < 70; ++i) wide += "Integer(1), ";
  wide += "Integer(1))";
  EXPECT_FALSE(SymbolicExpr::parse(wide, symbols)) << "deeper than the evaluator's stack";
}

}  // namespace
}  // namespace brisk
