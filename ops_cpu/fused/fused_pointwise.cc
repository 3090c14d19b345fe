// ops_cpu::fused_pointwise (fused_pointwise.h): the op table shared with the graph pass,
// the compiler from a group to a pw::Program, and the kernel.
//
// dtype rules, with every tensor input fp32 (checked per call): arithmetic, clamp and the
// activations of an fp32 tensor and a scalar or fp32 tensor are fp32 (a Python scalar, or
// a 0-dim constant tensor as the PT2 frontend passes scalars, is cast to float first, as
// ATen's type promotion does); comparisons give bool; where(bool, fp32 | scalar, fp32 |
// scalar) with at least one tensor is fp32. A 0-dim double constant only stays below fp32
// when the other operand has a dimension, so a program holding one needs every tensor
// input to have one. Anything else (bool arithmetic, integer tensors...) is not fused.
#include "ops_cpu/fused/fused_pointwise.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/resize_native.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "core/common/error.h"
#include "core/graph/graph.h"
#include "ops_cpu/out_variant/common.h"
#include "ops_cpu/simd/pointwise_program.h"

namespace brisk::ops_cpu {
namespace {

using pw::Op;

// How an op of the table reads its inputs.
enum class Form : uint8_t {
  kArithAlpha,   // (self, other, alpha=1) -> self op other
  kRsubAlpha,    // (self, other, alpha=1) -> other - self
  kBinary,       // (self, other)
  kCompare,      // (self, other) -> bool
  kWhere,        // (cond, self, other)
  kUnary,        // (self)
  kClamp,        // (self, min?, max?) constants or None
  kClampMin,     // (self, min)
  kClampMax,     // (self, max)
  kRelu6,        // (self)
  kLeakyRelu,    // (self, slope constant)
  kGelu,         // (self, approximate = "tanh" constant)
};

struct OpInfo {
  Form form;
  Op op;
  size_t inputs;
};

// Key (without "aten::" and without the in-place '_') -> how it is computed.
const std::map<std::string, OpInfo>& opTable() {
  static const auto* table = new std::map<std::string, OpInfo>{
      {"add.Tensor", {Form::kArithAlpha, Op::kAdd, 3}},   {"add.Scalar", {Form::kArithAlpha, Op::kAdd, 3}},
      {"sub.Tensor", {Form::kArithAlpha, Op::kSub, 3}},   {"sub.Scalar", {Form::kArithAlpha, Op::kSub, 3}},
      {"rsub.Tensor", {Form::kRsubAlpha, Op::kSub, 3}},   {"rsub.Scalar", {Form::kRsubAlpha, Op::kSub, 3}},
      {"mul.Tensor", {Form::kBinary, Op::kMul, 2}},       {"mul.Scalar", {Form::kBinary, Op::kMul, 2}},
      {"div.Tensor", {Form::kBinary, Op::kDiv, 2}},       {"div.Scalar", {Form::kBinary, Op::kDiv, 2}},
      {"eq.Tensor", {Form::kCompare, Op::kEq, 2}},        {"eq.Scalar", {Form::kCompare, Op::kEq, 2}},
      {"ne.Tensor", {Form::kCompare, Op::kNe, 2}},        {"ne.Scalar", {Form::kCompare, Op::kNe, 2}},
      {"lt.Tensor", {Form::kCompare, Op::kLt, 2}},        {"lt.Scalar", {Form::kCompare, Op::kLt, 2}},
      {"le.Tensor", {Form::kCompare, Op::kLe, 2}},        {"le.Scalar", {Form::kCompare, Op::kLe, 2}},
      {"gt.Tensor", {Form::kCompare, Op::kGt, 2}},        {"gt.Scalar", {Form::kCompare, Op::kGt, 2}},
      {"ge.Tensor", {Form::kCompare, Op::kGe, 2}},        {"ge.Scalar", {Form::kCompare, Op::kGe, 2}},
      {"where.self", {Form::kWhere, Op::kWhere, 3}},      {"where.ScalarOther", {Form::kWhere, Op::kWhere, 3}},
      {"where.ScalarSelf", {Form::kWhere, Op::kWhere, 3}},
      {"neg", {Form::kUnary, Op::kNeg, 1}},               {"abs", {Form::kUnary, Op::kAbs, 1}},
      {"reciprocal", {Form::kUnary, Op::kReciprocal, 1}}, {"sqrt", {Form::kUnary, Op::kSqrt, 1}},
      {"relu", {Form::kUnary, Op::kRelu, 1}},             {"exp", {Form::kUnary, Op::kExp, 1}},
      {"tanh", {Form::kUnary, Op::kTanh, 1}},             {"sigmoid", {Form::kUnary, Op::kSigmoid, 1}},
      {"silu", {Form::kUnary, Op::kSilu, 1}},             {"hardswish", {Form::kUnary, Op::kHardswish, 1}},
      {"hardsigmoid", {Form::kUnary, Op::kHardsigmoid, 1}},
      {"clamp", {Form::kClamp, Op::kMax, 3}},             {"hardtanh", {Form::kClamp, Op::kMax, 3}},
      {"clamp_min", {Form::kClampMin, Op::kMax, 2}},      {"clamp_max", {Form::kClampMax, Op::kMin, 2}},
      {"relu6", {Form::kRelu6, Op::kMax, 1}},             {"leaky_relu", {Form::kLeakyRelu, Op::kLeakyRelu, 2}},
      {"gelu", {Form::kGelu, Op::kGeluTanh, 2}},
  };
  return *table;
}

struct ParsedKey {
  const OpInfo* info = nullptr;
  bool inplace = false;
};

// "aten::add_.Tensor" -> add.Tensor, in place.
ParsedKey parseKey(const std::string& key) {
  ParsedKey p;
  if (key.rfind("aten::", 0) != 0) return p;
  std::string name = key.substr(6), overload;
  if (auto dot = name.find('.'); dot != std::string::npos) {
    overload = name.substr(dot);
    name = name.substr(0, dot);
  }
  if (!name.empty() && name.back() == '_') {
    name.pop_back();
    p.inplace = true;
  }
  auto it = opTable().find(name + overload);
  if (it != opTable().end()) p.info = &it->second;
  return p;
}

std::optional<double> constNumber(const Value* v) {
  if (!v->isConstant()) return std::nullopt;
  const c10::IValue& c = v->constant();
  if (c.isDouble()) return c.toDouble();
  if (c.isInt()) return static_cast<double>(c.toInt());
  return std::nullopt;
}

bool isNumberType(const c10::TypePtr& t) {
  const auto k = t->kind();
  return k == c10::TypeKind::FloatType || k == c10::TypeKind::IntType || k == c10::TypeKind::NumberType ||
         k == c10::TypeKind::BoolType;
}

// What an input of the fused node is to the program.
enum class InKind : uint8_t { kNone, kTensor, kScalar, kConstScalar };

struct InputPlan {
  InKind kind = InKind::kNone;
  float value = 0.0f;            // kConstScalar
  bool needs_rank = false;       // a 0-dim double constant (see the file comment)
  std::vector<int64_t> shape;    // kConstScalar from a one-element fp32 tensor: its sizes
  bool shaped = false;
};

// Classifies a value used as a computation operand; nullopt when unsupported.
std::optional<InputPlan> planOperand(const Value* v) {
  InputPlan p;
  if (v->isConstant()) {
    const c10::IValue& c = v->constant();
    if (c.isDouble() || c.isInt() || c.isBool()) {
      p.kind = InKind::kConstScalar;
      p.value = c.isDouble() ? static_cast<float>(c.toDouble())
                             : c.isInt() ? static_cast<float>(c.toInt()) : (c.toBool() ? 1.0f : 0.0f);
      return p;
    }
    if (!c.isTensor()) return std::nullopt;
    const at::Tensor& t = c.toTensor();
    if (!out::isDenseCpu(t) || t.is_complex()) return std::nullopt;
    if (t.scalar_type() == at::kFloat) {
      if (t.numel() != 1) {
        p.kind = InKind::kTensor;  // read from its slot like any tensor
        return p;
      }
      p.kind = InKind::kConstScalar;
      p.value = t.item<float>();
      p.shape = t.sizes().vec();
      p.shaped = true;
      return p;
    }
    if (t.dim() != 0) return std::nullopt;
    p.kind = InKind::kConstScalar;
    p.value = static_cast<float>(t.item<double>());
    p.needs_rank = c10::isFloatingType(t.scalar_type());
    return p;
  }
  if (isNumberType(v->type())) {
    p.kind = InKind::kScalar;
    return p;
  }
  if (v->type()->kind() == c10::TypeKind::TensorType) {
    p.kind = InKind::kTensor;
    return p;
  }
  return std::nullopt;
}

// The compiled group.
struct Compiled {
  pw::Program program;
  std::vector<InputPlan> inputs;  // per program input
  std::vector<int> source;        // per program input: the fused node's input
  std::vector<uint64_t> deps;     // per output: program inputs it depends on (bit mask)
  // Per in-place step with a second operand: (self's deps, the result's deps). ATen
  // refuses an in-place op whose result would be bigger than self; the fused loop checks
  // the shapes are equal and otherwise leaves the call to the original ops (and their error).
  std::vector<std::pair<uint64_t, uint64_t>> inplace_checks;
  bool needs_rank = false;
};

// Dtype of a value inside the group.
enum class VT : uint8_t { kF, kB, kS };

class Compiler {
 public:
  Compiler(const std::vector<PointwiseStep>& steps, const std::vector<Value*>& inputs, const std::vector<int>& outs)
      : steps_(steps), in_(inputs), outs_(outs) {}

  std::string compile(Compiled& c) {
    c_ = &c;
    slot_of_input_.assign(in_.size(), -1);
    // Last use of each step's result, to recycle registers.
    last_use_.assign(steps_.size(), -1);
    for (size_t s = 0; s < steps_.size(); ++s)
      for (size_t a = 1; a < steps_[s].args.size(); ++a)
        if (int r = steps_[s].args[a]; r < 0) last_use_[-r - 1] = static_cast<int>(s);
    for (int o : outs_) {
      if (o < 0 || o >= static_cast<int>(steps_.size())) return "bad output index";
      last_use_[o] = static_cast<int>(steps_.size());  // kept to the end
    }
    reg_.assign(steps_.size(), -1);
    type_.assign(steps_.size(), VT::kF);
    deps_.assign(steps_.size(), 0);
    for (size_t s = 0; s < steps_.size(); ++s)
      if (std::string e = step(s); !e.empty()) return steps_[s].key + ": " + e;
    // Register slots are numbered after the inputs, known only now.
    const uint16_t nin = static_cast<uint16_t>(c.inputs.size());
    if (c.inputs.size() > 64) return "more than 64 inputs";
    c.program.num_inputs = nin;
    c.program.num_registers = static_cast<uint16_t>(num_regs_);
    auto fix = [nin](uint16_t& slot) {
      if (slot & kRegBit) slot = static_cast<uint16_t>(nin + (slot & ~kRegBit));
    };
    for (pw::Instr& i : c.program.code) {
      fix(i.dst);
      fix(i.a);
      fix(i.b);
      fix(i.c);
    }
    for (int o : outs_) {
      uint16_t slot = static_cast<uint16_t>(reg_[o] | kRegBit);
      fix(slot);
      c.program.outputs.push_back({slot, type_[o] == VT::kB});
      c.deps.push_back(deps_[o]);
    }
    return "";
  }

 private:
  static constexpr uint16_t kRegBit = 0x8000;

  struct Operand {
    uint16_t slot;
    VT type;
    uint64_t deps;
  };

  // The operand for argument `a` of step `s`, or nullopt (with err_ set).
  std::optional<Operand> operand(size_t s, size_t a) {
    const int r = steps_[s].args[a];
    if (r < 0) {
      const int p = -r - 1;
      if (p >= static_cast<int>(s)) return fail("reads a later node");
      return Operand{static_cast<uint16_t>(reg_[p] | kRegBit), type_[p], deps_[p]};
    }
    if (r >= static_cast<int>(in_.size())) return fail("bad input index");
    if (slot_of_input_[r] < 0) {
      auto plan = planOperand(in_[r]);
      if (!plan) return fail("unsupported operand " + in_[r]->ref());
      // Equal constants share one input (PT2 makes one constant per use).
      if (plan->kind == InKind::kConstScalar && !plan->shaped) {
        for (size_t k = 0; k < c_->inputs.size(); ++k) {
          const InputPlan& q = c_->inputs[k];
          if (q.kind == InKind::kConstScalar && !q.shaped && q.needs_rank == plan->needs_rank &&
              std::memcmp(&q.value, &plan->value, sizeof(float)) == 0) {
            slot_of_input_[r] = static_cast<int>(k);
            break;
          }
        }
      }
      if (slot_of_input_[r] < 0) {
        if (c_->inputs.size() >= 64) return fail("more than 64 inputs");  // deps are 64-bit masks
        slot_of_input_[r] = static_cast<int>(c_->inputs.size());
        c_->needs_rank |= plan->needs_rank;
        c_->inputs.push_back(std::move(*plan));
        c_->source.push_back(r);
      }
    }
    const int k = slot_of_input_[r];
    const InputPlan& q = c_->inputs[k];
    const bool tensor = q.kind == InKind::kTensor || q.shaped;
    return Operand{static_cast<uint16_t>(k), tensor ? VT::kF : VT::kS, uint64_t{1} << k};
  }

  std::nullopt_t fail(std::string e) {
    err_ = std::move(e);
    return std::nullopt;
  }

  const Value* arg(size_t s, size_t a) const {
    const int r = steps_[s].args[a];
    return r >= 0 && r < static_cast<int>(in_.size()) ? in_[r] : nullptr;
  }

  // Releases operands whose last use is step s, then gives s a register.
  uint16_t result(size_t s, VT type, uint64_t deps) {
    for (size_t a = 1; a < steps_[s].args.size(); ++a) {
      const int r = steps_[s].args[a];
      if (r < 0 && last_use_[-r - 1] == static_cast<int>(s) && reg_[-r - 1] >= 0) {
        if (std::find(free_.begin(), free_.end(), reg_[-r - 1]) == free_.end()) free_.push_back(reg_[-r - 1]);
      }
    }
    int reg;
    if (!free_.empty()) {
      reg = free_.back();
      free_.pop_back();
    } else {
      reg = num_regs_++;
    }
    reg_[s] = reg;
    type_[s] = type;
    deps_[s] = deps;
    return static_cast<uint16_t>(reg | kRegBit);
  }

  void emit(Op op, uint16_t dst, uint16_t a, uint16_t b = 0, uint16_t c = 0, float imm = 0.0f) {
    c_->program.code.push_back(pw::Instr{op, dst, a, b, c, imm});
  }

  std::string step(size_t s) {
    const PointwiseStep& st = steps_[s];
    const ParsedKey pk = parseKey(st.key);
    if (!pk.info) return "not a fusable op";
    if (st.args.empty() || static_cast<size_t>(st.args[0]) != st.args.size() - 1 ||
        st.args.size() - 1 != pk.info->inputs)
      return "bad argument list";
    const OpInfo& info = *pk.info;
    auto need = [&](size_t a) { return operand(s, a + 1); };
    auto isOneConst = [&](size_t a) {
      const Value* v = arg(s, a + 1);
      auto d = v ? constNumber(v) : std::nullopt;
      return d && *d == 1.0;
    };
    switch (info.form) {
      case Form::kArithAlpha:
      case Form::kRsubAlpha:
      case Form::kBinary:
      case Form::kCompare: {
        if ((info.form == Form::kArithAlpha || info.form == Form::kRsubAlpha) && !isOneConst(2))
          return "alpha is not the constant 1";
        auto x = need(0), y = need(1);
        if (!x || !y) return err_;
        if (x->type == VT::kB || y->type == VT::kB) return "bool operand";
        if (x->type == VT::kS && y->type == VT::kS) return "no tensor operand";
        if (pk.inplace && (x->type != VT::kF || info.form == Form::kCompare)) return "in-place form";
        const VT t = info.form == Form::kCompare ? VT::kB : VT::kF;
        if (pk.inplace) c_->inplace_checks.emplace_back(x->deps, x->deps | y->deps);
        const uint16_t d = result(s, t, x->deps | y->deps);
        if (info.form == Form::kRsubAlpha)
          emit(info.op, d, y->slot, x->slot);
        else
          emit(info.op, d, x->slot, y->slot);
        return "";
      }
      case Form::kWhere: {
        auto c = need(0), x = need(1), y = need(2);
        if (!c || !x || !y) return err_;
        if (c->type != VT::kB) return "condition not computed in the group";
        if (x->type == VT::kB || y->type == VT::kB) return "bool operand";
        if (x->type == VT::kS && y->type == VT::kS) return "no tensor operand";
        const uint16_t d = result(s, VT::kF, c->deps | x->deps | y->deps);
        emit(Op::kWhere, d, c->slot, x->slot, y->slot);
        return "";
      }
      case Form::kUnary:
      case Form::kRelu6:
      case Form::kLeakyRelu:
      case Form::kGelu:
      case Form::kClamp:
      case Form::kClampMin:
      case Form::kClampMax: {
        auto x = need(0);
        if (!x) return err_;
        if (x->type != VT::kF) return "operand is not an fp32 tensor";
        float imm = 0.0f;
        std::optional<double> lo, hi;
        if (info.form == Form::kLeakyRelu) {
          auto slope = constNumber(arg(s, 2));
          if (!slope) return "slope is not a constant";
          imm = static_cast<float>(*slope);
        } else if (info.form == Form::kGelu) {
          const Value* a = arg(s, 2);
          if (!a || !a->isConstant() || !a->constant().isString() || a->constant().toStringRef() != "tanh")
            return "gelu without approximate='tanh'";
        } else if (info.form == Form::kRelu6) {
          lo = 0.0;
          hi = 6.0;
        } else if (info.form == Form::kClamp) {
          const Value* a = arg(s, 2);
          const Value* b = arg(s, 3);
          const bool a_none = a && a->isConstant() && a->constant().isNone();
          const bool b_none = b && b->isConstant() && b->constant().isNone();
          if (!a_none) lo = a ? constNumber(a) : std::nullopt;
          if (!b_none) hi = b ? constNumber(b) : std::nullopt;
          if ((!a_none && !lo) || (!b_none && !hi) || (a_none && b_none)) return "bounds are not constants";
        }
        if (info.form == Form::kClampMin || info.form == Form::kClampMax) {
          auto y = need(1);
          if (!y) return err_;
          if (y->type != VT::kS) return "bound is not a scalar";
          if (pk.inplace) c_->inplace_checks.emplace_back(x->deps, x->deps | y->deps);
          const uint16_t d = result(s, VT::kF, x->deps | y->deps);
          emit(info.op, d, x->slot, y->slot);
          return "";
        }
        if (lo || hi) {
          // clamp(x, lo, hi) = min(max(x, lo), hi), bounds as constant inputs.
          std::optional<Operand> lo_op, hi_op;
          if (lo) lo_op = constOperand(static_cast<float>(*lo));
          if (hi) hi_op = constOperand(static_cast<float>(*hi));
          const uint16_t d = result(s, VT::kF, x->deps);
          uint16_t src = x->slot;
          if (lo_op) {
            emit(Op::kMax, d, src, lo_op->slot);
            src = d;
          }
          if (hi_op) emit(Op::kMin, d, src, hi_op->slot);
          return "";
        }
        const uint16_t d = result(s, VT::kF, x->deps);
        emit(info.op, d, x->slot, 0, 0, imm);
        return "";
      }
    }
    return "unhandled form";
  }

  // A constant of the program that is no input of the node (clamp bounds).
  Operand constOperand(float v) {
    for (size_t k = 0; k < c_->inputs.size(); ++k) {
      const InputPlan& q = c_->inputs[k];
      if (q.kind == InKind::kConstScalar && !q.shaped && !q.needs_rank &&
          std::memcmp(&q.value, &v, sizeof(float)) == 0)
        return Operand{static_cast<uint16_t>(k), VT::kS, 0};
    }
    InputPlan p;
    p.kind = InKind::kConstScalar;
    p.value = v;
    c_->inputs.push_back(p);
    c_->source.push_back(-1);
    return Operand{static_cast<uint16_t>(c_->inputs.size() - 1), VT::kS, 0};
  }

  const std::vector<PointwiseStep>& steps_;
  const std::vector<Value*>& in_;
  const std::vector<int>& outs_;
  Compiled* c_ = nullptr;
  std::vector<int> slot_of_input_, last_use_, reg_, free_;
  std::vector<VT> type_;
  std::vector<uint64_t> deps_;
  int num_regs_ = 0;
  std::string err_;
};

// --- the kernel ------------------------------------------------------------------------

constexpr int kMaxDims = 8;

struct Shape {
  int64_t d[kMaxDims];
  int n = 0;
  int64_t numel() const {
    int64_t e = 1;
    for (int i = 0; i < n; ++i) e *= d[i];
    return e;
  }
};

// Broadcasts `s` into `into`; false when they do not broadcast or rank is too high.
bool broadcastInto(Shape& into, c10::IntArrayRef s) {
  const int r = static_cast<int>(s.size());
  if (r > kMaxDims) return false;
  if (r > into.n) {
    const int add = r - into.n;
    for (int i = into.n - 1; i >= 0; --i) into.d[i + add] = into.d[i];
    for (int i = 0; i < add; ++i) into.d[i] = 1;
    into.n = r;
  }
  for (int i = 1; i <= r; ++i) {
    int64_t& o = into.d[into.n - i];
    const int64_t v = s[r - i];
    if (v == o || v == 1) continue;
    if (o != 1) return false;
    o = v;
  }
  return true;
}

class FusedPointwiseKernel final : public Kernel {
 public:
  FusedPointwiseKernel(std::vector<PointwiseStep> steps, std::vector<int> outs, std::optional<Compiled> compiled,
                       std::string why)
      : Kernel(KernelKind::kOutVariant), steps_(std::move(steps)), outs_(std::move(outs)),
        compiled_(std::move(compiled)), why_(std::move(why)) {
    for (const PointwiseStep& st : steps_) {
      std::string name = st.key, overload;
      if (auto dot = name.find('.'); dot != std::string::npos) {
        overload = name.substr(dot + 1);
        name = name.substr(0, dot);
      }
      ops_.push_back(c10::Dispatcher::singleton().findSchemaOrThrow(name.c_str(), overload.c_str()));
    }
    if (!compiled_) return;
    // Constant scalars are broadcast once here, not per call.
    const auto& in = compiled_->inputs;
    const_tiles_.resize(in.size());
    for (size_t k = 0; k < in.size(); ++k) {
      if (in[k].kind != InKind::kConstScalar) continue;
      const_tiles_[k].assign(pw::kTile, in[k].value);
      if (in[k].shaped && !broadcastInto(const_shape_, in[k].shape)) compiled_.reset();
    }
  }

  void run(KernelContext& ctx) const override {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    if (!compiled_ || !runFused(ctx)) runOriginal(ctx);
  }

  std::string describe() const override {
    std::map<std::string, int> count;
    for (const PointwiseStep& st : steps_) ++count[st.key.substr(st.key.rfind(':') + 1)];
    std::string s = "brisk pointwise: " + std::to_string(steps_.size()) + " ops (";
    bool first = true;
    for (const auto& [k, n] : count) {
      s += (first ? "" : ", ") + k + (n > 1 ? " x" + std::to_string(n) : "");
      first = false;
    }
    s += ")";
    if (compiled_)
      s += std::string(" in one ") + (pw::vectorized() ? "AVX2" : "scalar") + " loop; others: the ATen ops";
    else
      s += " as the ATen ops (" + why_ + ")";
    return s;
  }

 private:
  // The fused path; false (nothing written) when this call's inputs are not its case.
  bool runFused(KernelContext& ctx) const {
    const Compiled& c = *compiled_;
    const size_t nin = c.inputs.size();
    pw::Input ins[64];
    c10::IntArrayRef sizes[64];
    Shape out = const_shape_;
    bool has_row = false;
    for (size_t k = 0; k < nin; ++k) {
      const InputPlan& p = c.inputs[k];
      pw::Input& x = ins[k];
      if (p.kind == InKind::kConstScalar) {
        x.kind = pw::InputKind::kScalar;
        x.data = const_tiles_[k].data();
        x.value = p.value;
        continue;
      }
      const c10::IValue& v = ctx.input(c.source[k]);
      if (p.kind == InKind::kScalar) {
        x.kind = pw::InputKind::kScalar;
        x.data = nullptr;
        if (v.isDouble())
          x.value = static_cast<float>(v.toDouble());
        else if (v.isInt())
          x.value = static_cast<float>(v.toInt());
        else if (v.isBool())
          x.value = v.toBool() ? 1.0f : 0.0f;
        else
          return false;
        continue;
      }
      if (!v.isTensor()) return false;
      const at::Tensor& t = v.toTensor();
      if (t.scalar_type() != at::kFloat || !out::isDenseCpu(t) || !t.is_contiguous()) return false;
      if (c.needs_rank && t.dim() == 0) return false;
      sizes[k] = t.sizes();
      if (!broadcastInto(out, sizes[k])) return false;
      x.data = t.data_ptr<float>();
    }
    const int64_t n = out.numel();
    const int64_t last = out.n > 0 ? out.d[out.n - 1] : 1;
    for (size_t k = 0; k < nin; ++k) {
      if (c.inputs[k].kind != InKind::kTensor) continue;
      pw::Input& x = ins[k];
      int64_t e = 1;
      for (int64_t s : sizes[k]) e *= s;
      if (e == n) {
        x.kind = pw::InputKind::kFull;
      } else if (e == 1) {
        x.kind = pw::InputKind::kScalar;
        x.value = x.data[0];
        x.data = nullptr;
      } else if (!sizes[k].empty() && sizes[k].back() == last && e == last) {
        x.kind = pw::InputKind::kRow;
        has_row = true;
      } else {
        return false;
      }
    }
    // Every output must have the full shape (an intermediate read outside the group may
    // depend on fewer inputs than the final result).
    const uint64_t tensors = tensorMask(c);
    for (uint64_t d : c.deps) {
      if ((d & tensors) == tensors) continue;
      Shape s = dependsShape(c, d, sizes);
      if (s.n != out.n || !std::equal(s.d, s.d + s.n, out.d)) return false;
    }
    for (const auto& [self_deps, result_deps] : c.inplace_checks) {
      const Shape a = dependsShape(c, self_deps, sizes), b = dependsShape(c, result_deps, sizes);
      if (a.n != b.n || !std::equal(a.d, a.d + a.n, b.d)) return false;
    }
    void* outs[64];
    const size_t nout = c.program.outputs.size();
    const c10::IntArrayRef out_sizes(out.d, out.n);
    for (size_t j = 0; j < nout; ++j) {
      const at::ScalarType dt = c.program.outputs[j].as_bool ? at::kBool : at::kFloat;
      at::Tensor* o = out::retainedOut(ctx, j, dt);
      if (o) {
        at::native::resize_(*o, out_sizes, c10::nullopt);
        if (!o->is_contiguous()) o = nullptr;
      }
      if (!o) {
        ctx.output(j) = at::empty(out_sizes, at::TensorOptions().dtype(dt));
        o = &ctx.output(j).toTensor();
      }
      outs[j] = o->data_ptr();
    }
    if (n == 0) return true;
    const int64_t inner = has_row ? last : n;
    constexpr int64_t kGrain = 32768;
    if (n >= 2 * kGrain && at::get_num_threads() > 1) {
      at::parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) { pw::run(c.program, ins, outs, b, e, inner); });
    } else {
      pw::run(c.program, ins, outs, 0, n, inner);
    }
    return true;
  }

  static uint64_t tensorMask(const Compiled& c) {
    uint64_t m = 0;
    for (size_t k = 0; k < c.inputs.size(); ++k)
      if (c.inputs[k].kind == InKind::kTensor || c.inputs[k].shaped) m |= uint64_t{1} << k;
    return m;
  }

  Shape dependsShape(const Compiled& c, uint64_t deps, const c10::IntArrayRef* sizes) const {
    Shape s;
    for (size_t k = 0; k < c.inputs.size(); ++k) {
      if (!(deps >> k & 1)) continue;
      if (c.inputs[k].kind == InKind::kTensor)
        broadcastInto(s, sizes[k]);
      else if (c.inputs[k].shaped)
        broadcastInto(s, c.inputs[k].shape);
    }
    return s;
  }

  // The original operators, one after another (boxed, through the dispatcher).
  void runOriginal(KernelContext& ctx) const {
    std::vector<c10::IValue> results(steps_.size());
    std::vector<c10::IValue> stack;
    for (size_t s = 0; s < steps_.size(); ++s) {
      stack.clear();
      const std::vector<int>& a = steps_[s].args;
      for (size_t i = 1; i < a.size(); ++i) stack.push_back(a[i] >= 0 ? ctx.input(a[i]) : results[-a[i] - 1]);
      ops_[s].callBoxed(stack);
      results[s] = std::move(stack.at(0));
    }
    for (size_t j = 0; j < outs_.size(); ++j) ctx.output(j) = results[outs_[j]];
  }

  std::vector<PointwiseStep> steps_;
  std::vector<int> outs_;
  std::optional<Compiled> compiled_;
  std::string why_;
  std::vector<c10::OperatorHandle> ops_;
  std::vector<std::vector<float>> const_tiles_;
  Shape const_shape_;
};

std::unique_ptr<Kernel> makeFusedPointwise(KernelBuildContext& b) {
  const Node& n = b.node();
  auto attr = [&](const char* name) -> const c10::IValue* {
    auto it = n.attributes().find(name);
    return it == n.attributes().end() ? nullptr : &it->second;
  };
  const c10::IValue *ops = attr("ops"), *args = attr("args"), *outs = attr("outs");
  if (!ops || !args || !outs || !ops->isList() || !args->isIntList() || !outs->isIntList())
    throw Error(b.modelName() + ": " + n.describe() + ": " + kFusedPointwiseKind + " without its ops/args/outs");
  std::vector<PointwiseStep> steps;
  const std::vector<int64_t> flat = args->toIntVector();
  size_t pos = 0;
  for (const c10::IValue& k : ops->toListRef()) {
    PointwiseStep st;
    st.key = k.toStringRef();
    if (pos >= flat.size()) throw Error(b.modelName() + ": " + n.describe() + ": truncated args");
    const int64_t count = flat[pos];
    if (count < 0 || pos + 1 + count > flat.size())
      throw Error(b.modelName() + ": " + n.describe() + ": truncated args");
    st.args.assign(flat.begin() + pos, flat.begin() + pos + 1 + count);
    pos += 1 + count;
    steps.push_back(std::move(st));
  }
  std::vector<int> out_idx;
  for (int64_t o : outs->toIntVector()) out_idx.push_back(static_cast<int>(o));
  if (out_idx.size() != n.outputs().size())
    throw Error(b.modelName() + ": " + n.describe() + ": outs does not match the node's outputs");
  Compiled c;
  std::string why = Compiler(steps, n.inputs(), out_idx).compile(c);
  std::optional<Compiled> compiled;
  if (why.empty()) compiled = std::move(c);
  return std::make_unique<FusedPointwiseKernel>(std::move(steps), std::move(out_idx), std::move(compiled), why);
}

}  // namespace

std::string pointwiseNodeProblem(const Node& n) {
  const ParsedKey pk = parseKey(n.key());
  if (!pk.info) return "not an elementwise op the interpreter has";
  if (n.inputs().size() != pk.info->inputs || n.outputs().size() != 1) return "unexpected arity";
  if (!n.blocks().empty()) return "has blocks";
  return "";
}

std::string pointwiseGroupProblem(const std::vector<PointwiseStep>& steps, const std::vector<Value*>& inputs,
                                  const std::vector<int>& outs) {
  Compiled c;
  return Compiler(steps, inputs, outs).compile(c);
}

const c10::FunctionSchema* fusedPointwiseSchema(size_t inputs, size_t outputs) {
  static std::mutex mu;
  // Never destroyed: nodes of any Module may point at them until the process ends.
  static auto* schemas = new std::map<std::pair<size_t, size_t>, std::unique_ptr<c10::FunctionSchema>>();
  std::lock_guard<std::mutex> lock(mu);
  auto& s = (*schemas)[{inputs, outputs}];
  if (!s) {
    std::vector<c10::Argument> args, rets;
    for (size_t i = 0; i < inputs; ++i) args.emplace_back("i" + std::to_string(i), c10::AnyType::get());
    for (size_t i = 0; i < outputs; ++i) rets.emplace_back("", c10::TensorType::get());
    s = std::make_unique<c10::FunctionSchema>(kFusedPointwiseKind, "", std::move(args), std::move(rets));
  }
  return s.get();
}

void registerFusedPointwise(PluginRegistrar& r) { r.outVariant(kFusedPointwiseKind, makeFusedPointwise); }

}  // namespace brisk::ops_cpu
