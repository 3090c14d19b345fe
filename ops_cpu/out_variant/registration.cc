// Out-variant kernels of the CPU plugin: one file per op family, registered here.
#include "ops_cpu/registration.h"

#include "ops_cpu/out_variant/common.h"

namespace brisk::ops_cpu {

namespace out {
namespace {

bool blockReads(const Block& b, const Value* v) {
  for (const Node* n : b.nodes()) {
    for (const Value* in : n->inputs())
      if (in == v) return true;
    for (const auto& sb : n->blocks())
      if (blockReads(*sb, v)) return true;
  }
  for (const Value* r : b.returns())
    if (r == v) return true;
  return false;
}

}  // namespace

bool outputsUsed(const Node& node, size_t first) {
  const Graph* g = node.owningBlock()->graph();
  for (size_t i = first; i < node.outputs().size(); ++i)
    if (blockReads(*g->top(), node.output(i))) return true;
  return false;
}

}  // namespace out

void registerOutVariantKernels(PluginRegistrar& r) {
  out::registerElementwise(r);
  out::registerActivations(r);
  out::registerConv(r);
  out::registerLinear(r);
  out::registerReductions(r);
  out::registerPooling(r);
  out::registerNorms(r);
  out::registerEmbedding(r);
  out::registerEmbeddingBag(r);
  out::registerShapeCopy(r);
  out::registerFactories(r);
  out::registerInPlace(r);
  out::registerMathOps(r);
  out::registerNewZeros(r);
  out::registerIndexing(r);
  out::registerResizePad(r);
  out::registerEinsum(r);
}

}  // namespace brisk::ops_cpu
