#pragma once
// A call into a region compiled ahead of time by another compiler, as a PT2 delegate
// program holds it (torch.ops.higher_order.executorch_call_delegate, written by
// torch.nativert.backends._lower_utils): one `brisk::call_delegate` node per region.
//
// The node's inputs are the call's operands, then the program's weights (graph
// constants) that the compiled region may take as its constants, named by the
// `weights` attribute in the same order. Its outputs are the region's results. Only a
// delegate backend runs it: the backend named by `delegate` claims the node, and core
// wraps it into a brisk::delegate partition (core/kernels/delegate.h), whose compile()
// reads the compiled files from `archive` under `data/<delegate's folder>/<name>/`.
namespace brisk {

inline constexpr const char* kCallDelegateKind = "brisk::call_delegate";
// The backend that runs it ("aoti" for AOTInductor's compiled files).
inline constexpr const char* kCallDelegateBackendAttr = "delegate";
// The region's name in the archive (the delegate program's name, e.g. "model-aoti").
inline constexpr const char* kCallDelegateNameAttr = "name";
// The archive's path, absolute.
inline constexpr const char* kCallDelegateArchiveAttr = "archive";
// How many of the node's inputs are the call's operands; the rest are weights.
inline constexpr const char* kCallDelegateOperandsAttr = "operands";
// The state-dict names of the weight inputs, in input order.
inline constexpr const char* kCallDelegateWeightsAttr = "weights";
// What the region was compiled for, per operand: its dtype (c10::ScalarType), its rank,
// and all ranks' sizes in a row (-1 for a size known only at run time).
inline constexpr const char* kCallDelegateDtypesAttr = "operand_dtypes";
inline constexpr const char* kCallDelegateRanksAttr = "operand_ranks";
inline constexpr const char* kCallDelegateDimsAttr = "operand_sizes";

}  // namespace brisk
