#pragma once
// The Kernel interface: what runs one Node on the hot path.
//
// A Kernel is built once per node at load (by a factory from a registry), shared by
// every Runtime of the Module and by all threads, so run() must be thread-safe and keep
// no per-run state in the object. Per-run state lives in the Runtime's slots.
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <memory>
#include <string>

namespace brisk {

class Runtime;

// Where a kernel comes from, in the kernel-choice order (docs/architecture.md, "Choosing
// a kernel"); the first registry that yields a kernel for a node wins. Provenance only:
// what happens to the outputs' memory is the kernel's OutputContract.
enum class KernelKind : uint8_t {
  kOutVariant = 0,  // the out-variant registry: kernels that write into their outputs
  kNative = 1,      // the native registry: static dispatch (views, list ops, prim ops, ...)
  kDelegate = 2,    // a delegate backend's compiled partition (core/kernels/delegate.h)
  kFallback = 3,    // the TorchScript operator, called boxed
};
constexpr int kNumKernelKinds = 4;
const char* kernelKindName(KernelKind kind);

// What a kernel does with its outputs' memory. The kernel states it; core alone decides
// from it and the options whether an output is kept between runs, placed in the memory
// plan's slab or written into the output arena.
enum class OutputContract : uint8_t {
  // Writes into output(i) when it already holds a fitting tensor (else stores a new
  // one): worth keeping between runs, and placeable in the slab.
  kReused = 0,
  // Allocates its result every run, through an OutputCapture (output_capture.h): the
  // allocation is served at the output's place in the slab when memory is planned; with
  // no plan, keeping it between runs would only hold memory, so core does not.
  kCaptured = 1,
  // Stores a new value, or a view or alias of an input, every run: never kept or placed.
  kFresh = 2,
  // May write its result into its reusable input (Node::reusableInput) instead of new
  // memory: the output is that input (or a new tensor when it does not fit), never kept.
  kIntoInput = 3,
};
const char* outputContractName(OutputContract contract);

// One node's view of a Runtime's slot array. Built by the executor per step; holds
// only pointers, so building it costs nothing.
class KernelContext {
 public:
  KernelContext(Runtime& rt, c10::IValue* slots, const uint32_t* in, uint32_t num_in,
                const uint32_t* out, uint32_t num_out)
      : rt_(rt), slots_(slots), in_(in), out_(out), num_in_(num_in), num_out_(num_out) {}

  const c10::IValue& input(size_t i) const { return slots_[in_[i]]; }
  const at::Tensor& tensor(size_t i) const { return slots_[in_[i]].toTensor(); }
  // Outputs keep their previous run's value when the planner allows reuse; an
  // out-variant kernel writes into output(i) when it already holds a tensor.
  c10::IValue& output(size_t i) const { return slots_[out_[i]]; }
  size_t numInputs() const { return num_in_; }
  size_t numOutputs() const { return num_out_; }

 private:
  // The Runtime and its slot array are core's: nested blocks are reached through a
  // BlockRunner, per-Runtime state through the delegate API, never through the frame.
  // OutputCapture finds the output's slot, which the memory plan is keyed by.
  friend class Runtime;
  friend class OutputCapture;
  Runtime& rt_;
  c10::IValue* slots_;
  const uint32_t* in_;
  const uint32_t* out_;
  uint32_t num_in_;
  uint32_t num_out_;
};

// State a kernel keeps per Runtime (Runtime::kernelState): what must not be shared
// between concurrent runs, made once per Runtime instead of once per call.
class KernelState {
 public:
  virtual ~KernelState() = default;
};

class Kernel {
 public:
  // Out-variant kernels reuse their outputs unless they say otherwise; the others make
  // fresh ones.
  explicit Kernel(KernelKind kind)
      : Kernel(kind, kind == KernelKind::kOutVariant ? OutputContract::kReused : OutputContract::kFresh) {}
  Kernel(KernelKind kind, OutputContract outputs) : kind_(kind), outputs_(outputs) {}
  virtual ~Kernel() = default;
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  virtual void run(KernelContext& ctx) const = 0;
  // What implements it, for `brisk inspect` (e.g. "at::cpu::add_out").
  virtual std::string describe() const { return ""; }

  KernelKind kind() const { return kind_; }
  OutputContract outputs() const { return outputs_; }
  // The plugin (or "core") that registered the factory; set by the registry.
  const std::string& provider() const { return provider_; }
  void setProvider(std::string p) { provider_ = std::move(p); }

 private:
  KernelKind kind_;
  OutputContract outputs_;
  std::string provider_;
};

// A kernel whose run() is a callable holding the load-time constants it captured;
// most kernels are one small function like that.
template <typename F>
class FunctionKernel final : public Kernel {
 public:
  FunctionKernel(KernelKind kind, OutputContract outputs, F f, std::string what)
      : Kernel(kind, outputs), f_(std::move(f)), what_(std::move(what)) {}
  void run(KernelContext& ctx) const override { f_(ctx); }
  std::string describe() const override { return what_; }

 private:
  F f_;
  std::string what_;
};

template <typename F>
std::unique_ptr<Kernel> functionKernel(KernelKind kind, OutputContract outputs, F f, std::string what) {
  return std::make_unique<FunctionKernel<F>>(kind, outputs, std::move(f), std::move(what));
}
template <typename F>
std::unique_ptr<Kernel> functionKernel(KernelKind kind, F f, std::string what) {
  return functionKernel(kind, kind == KernelKind::kOutVariant ? OutputContract::kReused : OutputContract::kFresh,
                        std::move(f), std::move(what));
}

}  // namespace brisk
