#include "ops_cpu/registration.h"

namespace brisk::ops_cpu {
void registerNativeKernels(PluginRegistrar&) {}
}  // namespace brisk::ops_cpu
