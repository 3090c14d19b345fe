// libbrisk_ops_cpu.so: brisk's CPU operator library, loaded through the plugin
// registries. Out-variant kernels (ops_cpu/out_variant/) write into reusable outputs; native
// kernels (ops_cpu/native/) cover views, list and scalar ops without the dispatcher.
#include "core/kernels/plugin.h"
#include "ops_cpu/registration.h"

BRISK_PLUGIN(registrar) {
  brisk::ops_cpu::registerOutVariantKernels(registrar);
  brisk::ops_cpu::registerNativeKernels(registrar);
}
