#pragma once
// After a run that cannot take finish's fast path (the profile run, a tensor that
// outgrew its plan, storages shared between managed values, a requested re-plan): finds
// the storages the managed slots hold, one group per storage, and detaches them.
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <vector>

#include "core/memory/managed_record.h"
#include "core/memory/slab_plan.h"
#include "planners/layout.h"

namespace brisk {

struct Regrouping {
  std::vector<planners::AllocationSpec> specs;  // one per storage
  std::vector<int32_t> new_group;               // per value: index into specs, -1 = none
  // Per value: held no storage we can place, or its storage is referenced from outside
  // the managed slots (its bytes were copied out of the slab).
  std::vector<uint8_t> evict;
  bool changed = false;  // the layout must be computed again
};

// changed: start from "the layout must change" (no layout yet, or a re-plan requested).
Regrouping regroup(c10::IValue* slots, std::vector<ManagedRecord>& values, const SlabPlan& slab, bool changed);

}  // namespace brisk
