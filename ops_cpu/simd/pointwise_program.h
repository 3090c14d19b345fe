#pragma once
// A vectorized interpreter for fused elementwise expressions (ops_cpu::fused_pointwise,
// built by the graph pass ops_cpu.fuse_pointwise). No JIT: a Program is a list of
// three-address instructions over fp32 registers, fixed at load; run() streams the
// elements through it one tile at a time (PwTile elements, a few KB of registers that
// stay in L1), so every instruction is one tight vector loop and intermediates never
// reach memory. Booleans (comparison results) live in registers as 1.0f / 0.0f.
//
// Numerics: add, sub, mul, div, neg, abs, reciprocal, rsqrt (1 / sqrt, as ATen's),
// min/max (clamp, relu), comparisons and where are one IEEE operation each, as ATen's
// kernels are: the same bits (this file is compiled with -ffp-contract=off, so nothing is
// fused into an FMA). sqrt is IEEE's correctly rounded one; ATen's goes through MKL's
// vector math and is up to 1 ulp off it. exp, log, tanh, sigmoid, silu, erf and both
// GELUs use the polynomials of vec_math.inc on the vector paths (bounds against ATen in
// README.md, asserted by tests/ops/fused_pointwise_test.cc) and ATen's own scalar
// formulas over std:: functions in the scalar path that runs on CPUs without AVX2 + FMA.
//
// Instruction sets: AVX-512F (16 lanes) where the CPU has it, else AVX2 + FMA (8 lanes),
// else scalar. The two vector paths are one source over two sets of primitives and give
// the same bits for every op.
//
// Plain C++ and intrinsics, no torch: the kernel (ops_cpu/fused/fused_pointwise.cc)
// checks dtypes and shapes and hands over raw pointers.
#include <cstdint>
#include <vector>

namespace brisk::ops_cpu::pw {

enum class Op : uint8_t {
  // binary: dst = a op b
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMax,  // b > a ? b : a with a's NaN kept: ATen's clamp_min(a, b) / vec::clamp_min
  kMin,  // b < a ? b : a with a's NaN kept: ATen's clamp_max(a, b)
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  // ternary: dst = a != 0 ? b : c
  kWhere,
  // unary: dst = f(a); imm is the op's constant where it has one
  kNeg,
  kAbs,
  kReciprocal,
  kSqrt,
  kRsqrt,  // 1 / sqrt(a), two roundings as ATen's
  kRelu,
  kLeakyRelu,  // a > 0 ? a : a * imm
  kHardsigmoid,
  kHardswish,
  kExp,
  kLog,
  kErf,
  kTanh,
  kSigmoid,
  kSilu,
  kGeluTanh,
  kGeluErf,  // gelu(approximate='none')
};

const char* opName(Op op);

struct Instr {
  Op op;
  // Operand slots: [0, num_inputs) are the inputs, [num_inputs, ...) registers.
  uint16_t dst = 0, a = 0, b = 0, c = 0;
  float imm = 0.0f;
  // The inputs the result depends on (bit k: input k). run() computes an instruction
  // that depends on trailing-dimension vectors and scalars only once per row.
  uint64_t deps = 0;
};

// How an input is read at element i of the output (row-major, `inner` = last dim).
enum class InputKind : uint8_t {
  kFull,    // data[i]
  kRow,     // data[i % inner]: a trailing-dimension vector
  kScalar,  // value, every element
};

// Elements per tile (the length of a register): 2 KB, so a program's registers stay in L1;
// 512 rather than 256 halves the per-tile cost of binding slots and dispatching
// instructions (a layer norm tail over 64 x 1024: 31 -> 28 us, one thread).
constexpr int64_t kTile = 512;

struct Input {
  InputKind kind = InputKind::kScalar;
  // kFull / kRow: the tensor's elements. kScalar: null (the value is broadcast into
  // per-thread scratch on each call), or kTile copies of `value` made at load (constants:
  // nothing to fill per call).
  const float* data = nullptr;
  float value = 0.0f;
};

struct Output {
  uint16_t slot = 0;     // the register (or input) holding the result
  bool as_bool = false;  // written as one byte 0 / 1 (a comparison's result)
};

struct Program {
  uint16_t num_inputs = 0;
  uint16_t num_registers = 0;
  std::vector<Instr> code;
  std::vector<Output> outputs;
};

// The code paths of run(), widest last.
enum class Isa : uint8_t { kScalar, kAvx2, kAvx512 };

// Whether this CPU can run `isa`'s path.
bool runsOn(Isa isa);
// The path run() takes on this CPU: the widest it runs.
Isa bestIsa();
const char* isaName(Isa isa);  // "scalar", "AVX2", "AVX-512"

// Elements [begin, end) of the outputs. outputs[k] points to element 0 of output k
// (float, or uint8_t for as_bool). Thread-safe (scratch is per thread, grown once).
void run(const Program& p, const Input* inputs, void* const* outputs, int64_t begin, int64_t end, int64_t inner);

// The same on a given path (tests compare them); runsOn(isa) must hold.
void runWith(Isa isa, const Program& p, const Input* inputs, void* const* outputs, int64_t begin, int64_t end,
             int64_t inner);

}  // namespace brisk::ops_cpu::pw
