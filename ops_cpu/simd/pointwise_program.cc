// The fused elementwise interpreter; see pointwise_program.h.
//
// Layout of one call: the output range is cut into tiles of at most kTile elements that
// never cross a row (so a trailing-dimension vector is one pointer per tile). Each tile
// gives every operand slot a pointer: a full input points into its tensor, a row input
// into its vector, a scalar input at a buffer filled with its value once per call, a
// register at its scratch buffer (or, for an output that overlaps no input, at the
// output itself). On the vector paths (AVX-512: 16 lanes, AVX2: 8) every instruction then
// runs whole vectors; a tile whose length is not a multiple of the lane count (the last
// one of a row) first copies its inputs into zero-padded staging buffers, so tails get
// exactly the same lane arithmetic as the body and nothing reads past a tensor's end.
// Both vector paths are one source (pointwise_exec.inc over vec_avx2.inc /
// vec_avx512.inc) and give the same bits.
#include "ops_cpu/simd/pointwise_program.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops_cpu/simd/cpu_features.h"
#include "ops_cpu/simd/math_avx2.h"
#include "ops_cpu/simd/math_avx512.h"

#pragma GCC diagnostic ignored "-Wpsabi"

namespace brisk::ops_cpu::pw {
namespace {

// The widest vector path's lane count: tiles of the hoisted rows are padded to it.
constexpr int64_t kMaxLanes = 16;

int64_t roundUp(int64_t n, int64_t lanes) { return (n + lanes - 1) / lanes * lanes; }

// Per-thread scratch: registers, scalar broadcasts, staging for short tiles, slot
// pointers, and the row-invariant results (see forTiles). Grown on the first call with a
// bigger program or row, then reused.
struct Scratch {
  std::vector<float> regs, bcast, staging, rows;
  std::vector<const float*> slots;
  std::vector<float*> dst;         // per register: where an instruction writing it stores
  std::vector<uint8_t> hoisted;    // per instruction
  std::vector<size_t> row_offset;  // per hoisted instruction: its row in `rows`
  float* reg(size_t i) { return regs.data() + i * kTile; }
};

Scratch& scratchFor(const Program& p) {
  static thread_local Scratch s;
  const size_t nin = p.num_inputs, nreg = p.num_registers;
  if (s.regs.size() < nreg * kTile) s.regs.resize(nreg * kTile);
  if (s.bcast.size() < nin * kTile) s.bcast.resize(nin * kTile);
  if (s.staging.size() < nin * kTile) s.staging.resize(nin * kTile);
  if (s.slots.size() < nin + nreg) s.slots.resize(nin + nreg);
  if (s.dst.size() < nreg) s.dst.resize(nreg);
  if (s.hoisted.size() < p.code.size()) {
    s.hoisted.resize(p.code.size());
    s.row_offset.resize(p.code.size());
  }
  return s;
}

// Sets the slots of the inputs for the tile [i, i + len) (row offset `col`).
// `pad`: copy full / row inputs into zero-padded staging (length not a multiple of
// `lanes`).
void bindInputs(const Program& p, const Input* in, Scratch& s, int64_t i, int64_t col, int64_t len, bool pad,
                int64_t lanes) {
  for (size_t k = 0; k < p.num_inputs; ++k) {
    const Input& x = in[k];
    if (x.kind == InputKind::kScalar) {
      s.slots[k] = x.data ? x.data : s.bcast.data() + k * kTile;
      continue;
    }
    const float* src = x.kind == InputKind::kFull ? x.data + i : x.data + col;
    if (pad) {
      float* st = s.staging.data() + k * kTile;
      std::memcpy(st, src, len * sizeof(float));
      std::memset(st + len, 0, (roundUp(len, lanes) - len) * sizeof(float));
      src = st;
    }
    s.slots[k] = src;
  }
}

void fillBroadcasts(const Program& p, const Input* in, Scratch& s) {
  for (size_t k = 0; k < p.num_inputs; ++k)
    if (in[k].kind == InputKind::kScalar && !in[k].data) std::fill_n(s.bcast.data() + k * kTile, kTile, in[k].value);
}

void storeOutputs(const Program& p, Scratch& s, void* const* outputs, int64_t i, int64_t len) {
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    const float* r = s.slots[p.outputs[k].slot];
    if (r == static_cast<const float*>(outputs[k]) + i) continue;  // written in place (see forTiles)
    if (p.outputs[k].as_bool) {
      uint8_t* o = static_cast<uint8_t*>(outputs[k]) + i;
      for (int64_t j = 0; j < len; ++j) o[j] = r[j] != 0.0f;
    } else {
      std::memcpy(static_cast<float*>(outputs[k]) + i, r, len * sizeof(float));
    }
  }
}

// Which instructions of this call are row-invariant: they read trailing-dimension vectors
// and scalars only (layer norm's rsqrt(var + eps), a bias's activation), so their result
// repeats every row. Computing them per element would redo that work once per row: the
// fused group of a layer norm's elementwise tail took twice as long as the unfused ops.
// Instead they run once over one row, and the tiles read their results like row inputs.
// Only where the range covers more than one row, and for rows up to kMaxHoistedRow
// elements (the scratch holds one row per such instruction).
constexpr int64_t kMaxHoistedRow = 1 << 16;

bool markHoisted(const Program& p, const Input* in, Scratch& s, int64_t begin, int64_t end, int64_t inner) {
  if (end - begin <= inner || inner > kMaxHoistedRow) return false;
  uint64_t row = 0, full = 0;
  for (size_t k = 0; k < p.num_inputs; ++k) {
    if (in[k].kind == InputKind::kRow) row |= uint64_t{1} << k;
    if (in[k].kind == InputKind::kFull) full |= uint64_t{1} << k;
  }
  if (!row) return false;
  size_t count = 0;
  // Tiles read up to kMaxLanes - 1 lanes past a row.
  const size_t stride = static_cast<size_t>(roundUp(inner + 1, kMaxLanes) + kMaxLanes);
  for (size_t i = 0; i < p.code.size(); ++i) {
    const uint64_t d = p.code[i].deps;
    s.hoisted[i] = (d & full) == 0 && (d & row) != 0;
    if (s.hoisted[i]) s.row_offset[i] = count++ * stride;
  }
  if (!count) return false;
  if (s.rows.size() < count * stride) s.rows.resize(count * stride);
  return true;
}

// The fp32 outputs whose register can be the output itself (bit k: output k): the
// instructions then store straight into it instead of into a register that is copied out
// after each tile. Only when the output overlaps no input (an output planned into an
// input's memory would be overwritten before later instructions of the tile read that
// input) and no other output. Registers hold one value after another: an earlier value
// that shares the output's register passes through the output's memory first.
uint64_t directOutputs(const Program& p, const Input* in, void* const* outputs, int64_t begin, int64_t end,
                       int64_t inner) {
  if (p.outputs.size() > 64) return 0;
  auto overlaps = [](const void* a, int64_t an, const void* b, int64_t bn) {
    const char *x = static_cast<const char*>(a), *y = static_cast<const char*>(b);
    return x < y + bn && y < x + an;
  };
  uint64_t direct = 0;
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    if (p.outputs[k].as_bool) continue;
    const float* o = static_cast<const float*>(outputs[k]) + begin;
    const int64_t bytes = (end - begin) * static_cast<int64_t>(sizeof(float));
    bool alone = true;
    for (size_t j = 0; j < p.num_inputs && alone; ++j) {
      if (in[j].kind == InputKind::kFull)
        alone = !overlaps(o, bytes, in[j].data + begin, bytes);
      else if (in[j].kind == InputKind::kRow)
        alone = !overlaps(o, bytes, in[j].data, inner * static_cast<int64_t>(sizeof(float)));
    }
    for (size_t j = 0; j < p.outputs.size() && alone; ++j)
      if (j != k)
        alone = !overlaps(o, bytes, static_cast<const char*>(outputs[j]) + begin * (p.outputs[j].as_bool ? 1 : 4),
                          (end - begin) * (p.outputs[j].as_bool ? 1 : 4));
    if (alone) direct |= uint64_t{1} << k;
  }
  return direct;
}

enum class Pass : uint8_t {
  kAll,   // every instruction
  kRow,   // the hoisted instructions over one row, into `rows`
  kTile,  // the others, reading the hoisted results from `rows`
};

// Runs the instructions of `pass` for a tile of `len` elements at row offset `col`:
// one(instr, a, b, c, dst, len). The operands are read before the destination's slot is
// rebound: an instruction may write the register of its own operand.
template <class One>
void runCode(const Program& p, Scratch& s, Pass pass, int64_t len, int64_t col, One&& one) {
  for (size_t i = 0; i < p.code.size(); ++i) {
    const Instr& in = p.code[i];
    const bool hoisted = pass != Pass::kAll && s.hoisted[i];
    if ((pass == Pass::kRow && !hoisted) || (pass == Pass::kTile && hoisted)) {
      if (hoisted) s.slots[in.dst] = s.rows.data() + s.row_offset[i] + col;
      continue;
    }
    const float *a = s.slots[in.a], *b = s.slots[in.b], *c = s.slots[in.c];
    s.slots[in.dst] = hoisted ? s.rows.data() + s.row_offset[i] + col : s.dst[in.dst - p.num_inputs];
    one(in, a, b, c, const_cast<float*>(s.slots[in.dst]), len);
  }
}

// Walks the tiles of [begin, end), running the program on each (one() per instruction,
// see runCode), then storing the outputs. `lanes`: the vector width one() computes in
// (1: the scalar path); shorter tiles are padded to it.
template <class One>
void forTiles(const Program& p, const Input* in, void* const* outputs, int64_t begin, int64_t end, int64_t inner,
              int64_t lanes, One&& one) {
  Scratch& s = scratchFor(p);
  for (size_t r = 0; r < p.num_registers; ++r) s.dst[r] = s.reg(r);
  fillBroadcasts(p, in, s);
  const uint64_t direct = directOutputs(p, in, outputs, begin, end, inner);
  const bool hoist = markHoisted(p, in, s, begin, end, inner);
  if (hoist) {
    for (int64_t col = 0; col < inner; col += kTile) {
      const int64_t len = std::min(kTile, inner - col);
      bindInputs(p, in, s, 0, col, len, len % lanes != 0, lanes);
      runCode(p, s, Pass::kRow, len, col, one);
    }
  }
  int64_t i = begin;
  while (i < end) {
    const int64_t col = i % inner;
    const int64_t len = std::min({kTile, end - i, inner - col});
    const bool pad = len % lanes != 0;
    bindInputs(p, in, s, i, col, len, pad, lanes);
    // A padded tile computes up to lanes - 1 lanes past `len`: those stay in the registers.
    for (size_t k = 0; k < p.outputs.size(); ++k)
      if (direct >> k & 1)
        s.dst[p.outputs[k].slot - p.num_inputs] =
            pad ? s.reg(p.outputs[k].slot - p.num_inputs) : static_cast<float*>(outputs[k]) + i;
    runCode(p, s, hoist ? Pass::kTile : Pass::kAll, len, col, one);
    storeOutputs(p, s, outputs, i, len);
    i += len;
  }
}

// --- scalar semantics (the portable path) ------------------------------------------

inline float geluTanhScalar(float x) {
  const float beta = static_cast<float>(M_SQRT2 * M_2_SQRTPI * 0.5);
  const float kappa = 0.044715f;
  const float cube = x * x * x;
  const float inner = beta * (x + kappa * cube);
  return 0.5f * x * (1.0f + std::tanh(inner));
}

inline float scalarOp(Op op, float a, float b, float c, float imm) {
  switch (op) {
    case Op::kAdd: return a + b;
    case Op::kSub: return a - b;
    case Op::kMul: return a * b;
    case Op::kDiv: return a / b;
    case Op::kMax: return b > a ? b : a;
    case Op::kMin: return b < a ? b : a;
    case Op::kEq: return a == b ? 1.0f : 0.0f;
    case Op::kNe: return a != b ? 1.0f : 0.0f;
    case Op::kLt: return a < b ? 1.0f : 0.0f;
    case Op::kLe: return a <= b ? 1.0f : 0.0f;
    case Op::kGt: return a > b ? 1.0f : 0.0f;
    case Op::kGe: return a >= b ? 1.0f : 0.0f;
    case Op::kWhere: return a != 0.0f ? b : c;
    case Op::kNeg: return -a;
    case Op::kAbs: return std::fabs(a);
    case Op::kReciprocal: return 1.0f / a;
    case Op::kSqrt: return std::sqrt(a);
    case Op::kRsqrt: return 1.0f / std::sqrt(a);
    case Op::kRelu: return 0.0f > a ? 0.0f : a;
    case Op::kLeakyRelu: return a > 0.0f ? a : a * imm;
    case Op::kHardsigmoid: {
      float t = a + 3.0f;
      t = 0.0f > t ? 0.0f : t;
      t = 6.0f < t ? 6.0f : t;
      return t / 6.0f;
    }
    case Op::kHardswish: {
      float t = a + 3.0f;
      t = 0.0f > t ? 0.0f : t;
      t = 6.0f < t ? 6.0f : t;
      return a * t / 6.0f;
    }
    case Op::kExp: return std::exp(a);
    case Op::kLog: return std::log(a);
    case Op::kErf: return std::erf(a);
    case Op::kTanh: return std::tanh(a);
    case Op::kSigmoid: return 1.0f / (1.0f + std::exp(-a));
    case Op::kSilu: return a / (1.0f + std::exp(-a));
    case Op::kGeluTanh: return geluTanhScalar(a);
    // ATen's scalar GELU (its tail loop), the same operations in the same order.
    case Op::kGeluErf: return a * 0.5f * (1.0f + std::erf(a * static_cast<float>(M_SQRT1_2)));
  }
  return a;
}

void runScalar(const Program& p, const Input* inputs, void* const* outputs, int64_t begin, int64_t end,
               int64_t inner) {
  forTiles(p, inputs, outputs, begin, end, inner, 1,
           [](const Instr& in, const float* a, const float* b, const float* c, float* d, int64_t len) {
             for (int64_t j = 0; j < len; ++j) d[j] = scalarOp(in.op, a[j], b[j], c[j], in.imm);
           });
}

// The vector paths: the generic instruction and run() (pointwise_exec.inc) compiled once per
// instruction set, each inside its own target region (lambdas inherit the region's
// target, not a function's attribute).
#define BRISK_VEC_INLINE __attribute__((always_inline)) inline

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
using namespace vmath::avx2;
#include "ops_cpu/simd/pointwise_exec.inc"
}  // namespace avx2
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,fma")
namespace avx512 {
using namespace vmath::avx512;
#include "ops_cpu/simd/pointwise_exec.inc"
}  // namespace avx512
#pragma GCC pop_options

#undef BRISK_VEC_INLINE

}  // namespace


bool runsOn(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return true;
    case Isa::kAvx2: return out::cpuHasAvx2Fma();
    case Isa::kAvx512: return out::cpuHasAvx512() && out::cpuHasAvx2Fma();
  }
  return false;
}

Isa bestIsa() {
  static const Isa best = runsOn(Isa::kAvx512) ? Isa::kAvx512 : runsOn(Isa::kAvx2) ? Isa::kAvx2 : Isa::kScalar;
  return best;
}

const char* isaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "AVX2";
    case Isa::kAvx512: return "AVX-512";
  }
  return "?";
}

void runWith(Isa isa, const Program& p, const Input* inputs, void* const* outputs, int64_t begin, int64_t end,
             int64_t inner) {
  switch (isa) {
    case Isa::kAvx512: return avx512::run(p, inputs, outputs, begin, end, inner);
    case Isa::kAvx2: return avx2::run(p, inputs, outputs, begin, end, inner);
    case Isa::kScalar: return runScalar(p, inputs, outputs, begin, end, inner);
  }
}

void run(const Program& p, const Input* inputs, void* const* outputs, int64_t begin, int64_t end, int64_t inner) {
  runWith(bestIsa(), p, inputs, outputs, begin, end, inner);
}

const char* opName(Op op) {
  switch (op) {
    case Op::kAdd: return "add";
    case Op::kSub: return "sub";
    case Op::kMul: return "mul";
    case Op::kDiv: return "div";
    case Op::kMax: return "max";
    case Op::kMin: return "min";
    case Op::kEq: return "eq";
    case Op::kNe: return "ne";
    case Op::kLt: return "lt";
    case Op::kLe: return "le";
    case Op::kGt: return "gt";
    case Op::kGe: return "ge";
    case Op::kWhere: return "where";
    case Op::kNeg: return "neg";
    case Op::kAbs: return "abs";
    case Op::kReciprocal: return "reciprocal";
    case Op::kSqrt: return "sqrt";
    case Op::kRsqrt: return "rsqrt";
    case Op::kRelu: return "relu";
    case Op::kLeakyRelu: return "leaky_relu";
    case Op::kHardsigmoid: return "hardsigmoid";
    case Op::kHardswish: return "hardswish";
    case Op::kExp: return "exp";
    case Op::kLog: return "log";
    case Op::kErf: return "erf";
    case Op::kTanh: return "tanh";
    case Op::kSigmoid: return "sigmoid";
    case Op::kSilu: return "silu";
    case Op::kGeluTanh: return "gelu_tanh";
    case Op::kGeluErf: return "gelu";
  }
  return "?";
}

}  // namespace brisk::ops_cpu::pw
