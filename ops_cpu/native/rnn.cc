// Recurrent layers: aten::lstm and aten::gru, both overloads each (.input: a padded
// [T, B, F] / [B, T, F] sequence; .data: a packed sequence's data and batch_sizes).
//
// With frozen weights, the .input overloads are normally served by brisk's own layers
// (rnn_layers.h, out-variant kernels registered here and tried first); the kernels
// below serve what those decline (weights read per run, proj_size, flags that are not
// constants), the packed-sequence overloads, and every node when the out-variant
// registry is off.
//
// Each kernel calls ATen's own at::lstm / at::gru, i.e. exactly what the interpreter's
// boxed operator runs (oneDNN's fused LSTM where ATen picks it, ATen's cell loop with
// one input-projection GEMM over all steps otherwise), so results are bit-identical,
// proj_size included (the projection weights are simply part of `params`). What the
// kernel saves over the fallback is the per-run work around that call: the frozen
// weights are gathered into a contiguous tensor array once at load (the boxed op
// converts the IValue list to a vector on every run), the flags are read once, and
// there is no IValue stack.
//
// Inference only: train=true (dropout between layers, a different code path) is
// refused with an error at load when it is a constant, at run otherwise. The results
// are fresh tensors (kNative: the runtime neither retains nor plans them).
#include <ATen/ATen.h>

#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops_cpu/native/common.h"
#include "ops_cpu/native/rnn_layers.h"

namespace brisk::ops_cpu::native {
namespace {

// A bool/int/float argument: the constant read at load, or the slot read per run.
template <typename T>
class ConstOr {
 public:
  ConstOr(const Node& n, size_t i) : index_(i) {
    if (isConst(n, i)) {
      is_const_ = true;
      value_ = read(constant(n, i));
    }
  }
  T get(const KernelContext& ctx) const { return is_const_ ? value_ : read(ctx.input(index_)); }
  bool isConstant() const { return is_const_; }
  T constantValue() const { return value_; }

 private:
  static T read(const c10::IValue& v) {
    if constexpr (std::is_same_v<T, bool>) return v.toBool();
    else if constexpr (std::is_same_v<T, int64_t>) return v.toInt();
    else return v.isDouble() ? v.toDouble() : static_cast<double>(v.toInt());
  }
  size_t index_;
  bool is_const_ = false;
  T value_{};
};

// The Tensor[] of weights (w_ih, w_hh[, b_ih, b_hh][, w_hr] per layer and direction):
// gathered once when constant (frozen parameters, the normal case), else per run.
class ParamsArg {
 public:
  ParamsArg(const Node& n, size_t i) : index_(i) {
    if (isConst(n, i) && constant(n, i).isTensorList()) {
      is_const_ = true;
      params_ = constant(n, i).toTensorVector();
    }
  }
  bool isConstant() const { return is_const_; }
  // `scratch` holds the per-run copy when the list is not constant.
  at::TensorList get(const KernelContext& ctx, std::vector<at::Tensor>& scratch) const {
    if (is_const_) return params_;
    scratch = ctx.input(index_).toTensorVector();
    return scratch;
  }

 private:
  size_t index_;
  bool is_const_ = false;
  std::vector<at::Tensor> params_;
};

void refuseTraining(const char* op) {
  throw std::invalid_argument(std::string(op) +
                              " with train=true: brisk runs models in inference mode only (export the module "
                              "after .eval(); dropout between layers is not supported)");
}

// The arguments after `params`, in schema order. .input: has_biases, num_layers,
// dropout, train, bidirectional, batch_first; .data: the same without batch_first.
struct RnnFlags {
  ConstOr<bool> has_biases, train, bidirectional, batch_first;
  ConstOr<int64_t> num_layers;
  ConstOr<double> dropout;
  bool packed;

  RnnFlags(const Node& n, size_t first, bool is_packed, const char* op)
      : has_biases(n, first),
        train(n, first + 3),
        bidirectional(n, first + 4),
        // .data has no batch_first; any in-range index will do, it is never read.
        batch_first(n, is_packed ? first : first + 5),
        num_layers(n, first + 1),
        dropout(n, first + 2),
        packed(is_packed) {
    if (train.isConstant() && train.constantValue()) refuseTraining(op);
  }
  void checkEval(const KernelContext& ctx, const char* op) const {
    if (!train.isConstant() && train.get(ctx)) refuseTraining(op);
  }
};

// aten::lstm.input(input, Tensor[] hx, Tensor[] params, has_biases, num_layers,
// dropout, train, bidirectional, batch_first) -> (output, h_n, c_n)
// aten::lstm.data(data, batch_sizes, Tensor[] hx, Tensor[] params, has_biases,
// num_layers, dropout, train, bidirectional) -> (output, h_n, c_n)
std::string describe(const char* op, bool packed, const ParamsArg& params) {
  return std::string(op) + (packed ? " (packed" : " (") + (packed ? "; " : "") +
         (params.isConstant() ? "weights gathered at load)" : "weights read per run)");
}

// What both recurrent kernels read at load: where hx sits, the weights and the flags.
struct RnnArgs {
  size_t hx_index;
  ParamsArg params;
  RnnFlags f;
  std::string what;
};

// Null unless the node has the overload's 9 inputs and `outputs` outputs.
std::optional<RnnArgs> rnnArgs(const Node& n, bool packed, size_t outputs, const char* op, const char* call) {
  if (n.inputs().size() != 9 || n.outputs().size() != outputs) return std::nullopt;
  const size_t hx_index = packed ? 2 : 1;
  ParamsArg params(n, hx_index + 1);
  RnnFlags f(n, hx_index + 2, packed, op);
  std::string what = describe(call, packed, params);
  return RnnArgs{hx_index, std::move(params), f, std::move(what)};
}

std::unique_ptr<Kernel> lstm(KernelBuildContext& b, bool packed) {
  std::optional<RnnArgs> args = rnnArgs(b.node(), packed, 3, "aten::lstm", "at::lstm");
  if (!args) return nullptr;
  std::string what = args->what;
  return lambda(
      [params = std::move(args->params), f = args->f, hx_index = args->hx_index](KernelContext& ctx) {
        f.checkEval(ctx, "aten::lstm");
        // hx is (h0, c0): copied to a stack array (ATen wants contiguous Tensors, the
        // list holds IValues); anything but two tensors goes to ATen as is, for its error.
        c10::ArrayRef<c10::IValue> hx_list = ctx.input(hx_index).toListRef();
        std::array<at::Tensor, 2> hx;
        std::vector<at::Tensor> odd;
        at::TensorList hx_ref;
        if (hx_list.size() == 2) {
          hx = {hx_list[0].toTensor(), hx_list[1].toTensor()};
          hx_ref = hx;
        } else {
          odd = ctx.input(hx_index).toTensorVector();
          hx_ref = odd;
        }
        std::vector<at::Tensor> scratch;
        const at::TensorList p = params.get(ctx, scratch);
        std::tuple<at::Tensor, at::Tensor, at::Tensor> r =
            f.packed ? at::lstm(ctx.tensor(0), ctx.tensor(1), hx_ref, p, f.has_biases.get(ctx), f.num_layers.get(ctx),
                                f.dropout.get(ctx), false, f.bidirectional.get(ctx))
                     : at::lstm(ctx.tensor(0), hx_ref, p, f.has_biases.get(ctx), f.num_layers.get(ctx),
                                f.dropout.get(ctx), false, f.bidirectional.get(ctx), f.batch_first.get(ctx));
        ctx.output(0) = std::move(std::get<0>(r));
        ctx.output(1) = std::move(std::get<1>(r));
        ctx.output(2) = std::move(std::get<2>(r));
      },
      std::move(what));
}

// aten::gru.input(input, hx, Tensor[] params, has_biases, num_layers, dropout, train,
// bidirectional, batch_first) -> (output, h_n)
// aten::gru.data(data, batch_sizes, hx, Tensor[] params, has_biases, num_layers,
// dropout, train, bidirectional) -> (output, h_n)
std::unique_ptr<Kernel> gru(KernelBuildContext& b, bool packed) {
  std::optional<RnnArgs> args = rnnArgs(b.node(), packed, 2, "aten::gru", "at::gru");
  if (!args) return nullptr;
  std::string what = args->what;
  return lambda(
      [params = std::move(args->params), f = args->f, hx_index = args->hx_index](KernelContext& ctx) {
        f.checkEval(ctx, "aten::gru");
        std::vector<at::Tensor> scratch;
        const at::TensorList p = params.get(ctx, scratch);
        const at::Tensor& hx = ctx.tensor(hx_index);
        std::tuple<at::Tensor, at::Tensor> r =
            f.packed ? at::gru(ctx.tensor(0), ctx.tensor(1), hx, p, f.has_biases.get(ctx), f.num_layers.get(ctx),
                               f.dropout.get(ctx), false, f.bidirectional.get(ctx))
                     : at::gru(ctx.tensor(0), hx, p, f.has_biases.get(ctx), f.num_layers.get(ctx),
                               f.dropout.get(ctx), false, f.bidirectional.get(ctx), f.batch_first.get(ctx));
        ctx.output(0) = std::move(std::get<0>(r));
        ctx.output(1) = std::move(std::get<1>(r));
      },
      std::move(what));
}

}  // namespace

void registerRnnKernels(PluginRegistrar& r) {
  // brisk's own layers for frozen weights (out-variant kernels, tried first); these
  // native kernels serve the nodes they decline and the packed-sequence overloads.
  registerBriskRnnKernels(r);
  r.native("aten::lstm.input", [](KernelBuildContext& b) { return lstm(b, false); });
  r.native("aten::lstm.data", [](KernelBuildContext& b) { return lstm(b, true); });
  r.native("aten::gru.input", [](KernelBuildContext& b) { return gru(b, false); });
  r.native("aten::gru.data", [](KernelBuildContext& b) { return gru(b, true); });
}

}  // namespace brisk::ops_cpu::native
