#include "ops_cpu/native/common.h"
#include "ops_cpu/registration.h"

namespace brisk::ops_cpu {

// Native kernels: views, tensor metadata, scalar, list and dict ops, the fused
// transformer ops, format/warn, lstm/gru, called without the dispatcher's boxing.
// Core registers the prim container / control-flow ops itself.
void registerNativeKernels(PluginRegistrar& r) {
  native::registerViewKernels(r);
  native::registerTensorInfoKernels(r);
  native::registerScalarKernels(r);
  native::registerListKernels(r);
  native::registerTransformerKernels(r);
  native::registerMessageKernels(r);
  native::registerDictKernels(r);
  native::registerRnnKernels(r);
  native::registerFamilyTensorKernels(r);
  native::registerNativeGroupNormKernel(r);
  native::registerMoreViewKernels(r);
  native::registerPt2BookkeepingKernels(r);
}

}  // namespace brisk::ops_cpu
