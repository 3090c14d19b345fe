// The compiler from a group to a pw::Program (pointwise_compiler.h): it classifies the
// fused node's inputs, applies the dtype rules step by step, allocates registers, and
// emits the instructions. Also pointwiseGroupProblem (fused_pointwise.h), the same
// compilation run by the graph pass to decide whether a group may be formed.
#include "ops_cpu/fused/pointwise_compiler.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "core/graph/graph.h"
#include "ops_cpu/fused/pointwise_ops.h"
#include "ops_cpu/out_variant/common.h"

namespace brisk::ops_cpu {
namespace pointwise {
namespace {

using pw::Op;

bool isNumberType(const c10::TypePtr& t) {
  const auto k = t->kind();
  return k == c10::TypeKind::FloatType || k == c10::TypeKind::IntType || k == c10::TypeKind::NumberType ||
         k == c10::TypeKind::BoolType;
}

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
    for (size_t s = 0; s < steps_.size(); ++s) {
      const size_t first = c.program.code.size();
      if (std::string e = step(s); !e.empty()) return steps_[s].key + ": " + e;
      for (size_t i = first; i < c.program.code.size(); ++i) c.program.code[i].deps = deps_[s];
    }
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

  // Releases operands whose last use is step s, then gives s a register. With
  // `operands_live` the register is taken first, so it is none of the operands' (for
  // steps that write their result before they last read an operand).
  uint16_t result(size_t s, VT type, uint64_t deps, bool operands_live = false) {
    auto release = [&] {
      for (size_t a = 1; a < steps_[s].args.size(); ++a) {
        const int r = steps_[s].args[a];
        if (r < 0 && last_use_[-r - 1] == static_cast<int>(s) && reg_[-r - 1] >= 0) {
          if (std::find(free_.begin(), free_.end(), reg_[-r - 1]) == free_.end()) free_.push_back(reg_[-r - 1]);
        }
      }
    };
    if (!operands_live) release();
    int reg;
    if (!free_.empty()) {
      reg = free_.back();
      free_.pop_back();
    } else {
      reg = num_regs_++;
    }
    if (operands_live) release();
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
      auto d = v ? constantNumber(v) : std::nullopt;
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
      case Form::kPowScalar:
      case Form::kClamp:
      case Form::kClampMin:
      case Form::kClampMax: {
        auto x = need(0);
        if (!x) return err_;
        if (x->type != VT::kF) return "operand is not an fp32 tensor";
        float imm = 0.0f;
        std::optional<double> lo, hi;
        if (info.form == Form::kLeakyRelu) {
          auto slope = constantNumber(arg(s, 2));
          if (!slope) return "slope is not a constant";
          imm = static_cast<float>(*slope);
        } else if (info.form == Form::kGelu) {
          const Value* a = arg(s, 2);
          if (!a || !a->isConstant() || !a->constant().isString()) return "gelu's approximate is not a constant";
          const std::string& approximate = a->constant().toStringRef();
          if (approximate != "tanh" && approximate != "none") return "gelu's approximate is neither 'none' nor 'tanh'";
          const uint16_t d = result(s, VT::kF, x->deps);
          emit(approximate == "tanh" ? Op::kGeluTanh : Op::kGeluErf, d, x->slot);
          return "";
        } else if (info.form == Form::kPowScalar) {
          return powScalar(s, *x);
        } else if (info.form == Form::kRelu6) {
          lo = 0.0;
          hi = 6.0;
        } else if (info.form == Form::kClamp) {
          const Value* a = arg(s, 2);
          const Value* b = arg(s, 3);
          const bool a_none = a && a->isConstant() && a->constant().isNone();
          const bool b_none = b && b->isConstant() && b->constant().isNone();
          if (!a_none) lo = a ? constantNumber(a) : std::nullopt;
          if (!b_none) hi = b ? constantNumber(b) : std::nullopt;
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

  // pow(x, e) for the exponents ATen computes with plain arithmetic
  // (aten/src/ATen/native/cpu/PowKernel.cpp): 2 -> x * x, 3 -> x * x * x, -2 -> 1 / (x * x),
  // -1 -> reciprocal, -0.5 -> rsqrt, 0.5 -> sqrt; the same operations give the same bits
  // (sqrt: see pointwise_program.h). Other exponents go through Sleef's powf there, which
  // the interpreter has no counterpart of; 0 and 1 are a fill and a copy: not fused.
  std::string powScalar(size_t s, const Operand& x) {
    const Value* e = arg(s, 2);
    const std::optional<double> exponent = e ? constantNumber(e) : std::nullopt;
    if (!exponent) return "exponent is not a constant";
    const double p = *exponent;
    if (p != 2.0 && p != 3.0 && p != -2.0 && p != -1.0 && p != -0.5 && p != 0.5)
      return "exponent other than 2, 3, -2, -1, -0.5, 0.5";
    const uint16_t d = result(s, VT::kF, x.deps, /*operands_live=*/p == 3.0);
    if (p == 0.5) {
      emit(Op::kSqrt, d, x.slot);
    } else if (p == -0.5) {
      emit(Op::kRsqrt, d, x.slot);
    } else if (p == -1.0) {
      emit(Op::kReciprocal, d, x.slot);
    } else {
      emit(Op::kMul, d, x.slot, x.slot);
      if (p == 3.0) emit(Op::kMul, d, d, x.slot);
      if (p == -2.0) emit(Op::kReciprocal, d, d);
    }
    return "";
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

}  // namespace

std::string compile(const std::vector<PointwiseStep>& steps, const std::vector<Value*>& inputs,
                    const std::vector<int>& outs, Compiled& c) {
  return Compiler(steps, inputs, outs).compile(c);
}

}  // namespace pointwise

std::string pointwiseGroupProblem(const std::vector<PointwiseStep>& steps, const std::vector<Value*>& inputs,
                                  const std::vector<int>& outs) {
  pointwise::Compiled c;
  return pointwise::compile(steps, inputs, outs, c);
}

}  // namespace brisk::ops_cpu
