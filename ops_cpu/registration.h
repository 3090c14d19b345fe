#pragma once
#include "core/kernels/plugin.h"

namespace brisk::ops_cpu {

// Each defined in its own folder (out_variant/registration.cc, native/registration.cc);
// plugin.cc calls them, then the fused/ passes' own registrations.
void registerOutVariantKernels(PluginRegistrar& r);
void registerNativeKernels(PluginRegistrar& r);

}  // namespace brisk::ops_cpu
