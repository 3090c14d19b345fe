#pragma once
#include "core/kernels/plugin.h"

namespace brisk::ops_cpu {

// Each defined in its own folder (out/registration.cc, native/registration.cc).
void registerOutVariantKernels(PluginRegistrar& r);
void registerNativeKernels(PluginRegistrar& r);

}  // namespace brisk::ops_cpu
