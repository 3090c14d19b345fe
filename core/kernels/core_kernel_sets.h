#pragma once
// Core's own kernels live in the layer that implements them: prim ops here, control
// flow and fork/wait in core/executor (they run blocks and child Modules). Each set adds
// itself once, at static initialization, and every Registries instance gets all of them
// on construction, with provider "core". Not part of the plugin API: plugins register
// through PluginRegistrar.
namespace brisk {

struct Registries;

using CoreKernelSet = void (*)(Registries&);

// Use at namespace scope: `static const CoreKernelSetRegistration r(registerMyKernels);`
struct CoreKernelSetRegistration {
  explicit CoreKernelSetRegistration(CoreKernelSet set);
};

// Adds every registered set to `registries` (Registries' constructor calls it).
void registerCoreKernels(Registries& registries);

}  // namespace brisk
