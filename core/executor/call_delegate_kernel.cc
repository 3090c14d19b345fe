// brisk::call_delegate (core/graph/call_delegate.h) outside a delegate partition: no
// kernel of brisk's own can run a region another compiler built, so a program that
// calls one loads only with the backend that claims it. Saying so at load, with the
// way out, beats failing on the first run.
#include "core/common/error.h"
#include "core/graph/call_delegate.h"
#include "core/graph/graph.h"
#include "core/kernels/core_kernel_sets.h"
#include "core/kernels/kernel_registry.h"

namespace brisk {
namespace {

std::unique_ptr<Kernel> refuseCallDelegate(KernelBuildContext& b) {
  const Node& n = b.node();
  auto attr = n.attributes().find(kCallDelegateBackendAttr);
  const std::string backend = attr != n.attributes().end() ? attr->second.toStringRef() : "?";
  throw Error("this program calls a region compiled ahead of time, which only the '" + backend +
              "' delegate backend runs, and it did not claim the call: keep it in the delegates option (--delegate " +
              backend + ", and not --no-delegates), or run the archive's original program (pt2_program)");
}

void registerCallDelegateKernel(Registries& r) { r.native.add(kCallDelegateKind, refuseCallDelegate, "core"); }

const CoreKernelSetRegistration call_delegate_kernel(registerCallDelegateKernel);

}  // namespace
}  // namespace brisk
