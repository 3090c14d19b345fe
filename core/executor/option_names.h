#pragma once
// The names options take from registries above core/common (option_table.h's
// OptionNameLists): core's graph passes and the memory planners, read from the
// registries themselves so help texts, the Python docstring and the README never spell
// them again.
#include "core/common/option_table.h"

namespace brisk {

// "passes": core's passes that may be disabled, in the order they run;
// "required_passes": core's passes that may not; "planners": every memory planner.
const OptionNameLists& optionNameLists();

}  // namespace brisk
