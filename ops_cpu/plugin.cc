// libbrisk_ops_cpu.so: brisk's CPU operator library, loaded through the plugin
// registries. Out-variant kernels (ops_cpu/out_variant/) write into reusable outputs; native
// kernels (ops_cpu/native/) cover views, list and scalar ops without the dispatcher; fused
// ops (ops_cpu/fused/) replace subgraphs that their graph passes find.
#include "core/kernels/plugin.h"
#include "ops_cpu/fused/elementwise_fusion.h"
#include "ops_cpu/fused/encoder_layer_decompose.h"
#include "ops_cpu/fused/fused_pointwise.h"
#include "ops_cpu/fused/gru_cell_fusion.h"
#include "ops_cpu/fused/gru_step.h"
#include "ops_cpu/fused/lstm_cell_fusion.h"
#include "ops_cpu/fused/lstm_step.h"
#include "ops_cpu/fused/rnn_layer_fusion.h"
#include "ops_cpu/fused/view_chain.h"
#include "ops_cpu/registration.h"

BRISK_PLUGIN(registrar) {
  brisk::ops_cpu::registerOutVariantKernels(registrar);
  brisk::ops_cpu::registerNativeKernels(registrar);
  brisk::ops_cpu::registerLstmStep(registrar);
  brisk::ops_cpu::registerLstmCellFusion(registrar);
  brisk::ops_cpu::registerGruStep(registrar);
  brisk::ops_cpu::registerGruCellFusion(registrar);
  brisk::ops_cpu::registerRnnLayerFusion(registrar);  // after the step fusions: reads their nodes
  brisk::ops_cpu::registerEncoderLayerDecompose(registrar);
  brisk::ops_cpu::registerFusedPointwise(registrar);
  brisk::ops_cpu::registerElementwiseFusion(registrar);
  brisk::ops_cpu::registerViewChain(registrar);
}
