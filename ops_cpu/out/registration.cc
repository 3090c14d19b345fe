#include "ops_cpu/registration.h"

namespace brisk::ops_cpu {
void registerOutVariantKernels(PluginRegistrar&) {}
}  // namespace brisk::ops_cpu
