#pragma once
// Process-wide thread settings: libtorch's intra-op threads (at::set_num_threads, which
// also sets those of MKL, the BLAS inside libtorch) and the size of brisk's inter-op
// arena. Each is applied once per process by the first Module that asks for it; a later
// Module asking for a different value gets a clear error instead of silently changing
// (or not changing) every other Module's behaviour.
// 0 means "no preference" and never conflicts.
#include <string>

namespace brisk::threading {

struct ThreadSettings {
  int intra_op = 0;  // at::set_num_threads
  int inter_op = 0;  // inter-op arena size (default when unset: hardware threads)
};

// Applies the non-zero fields not yet applied in this process. Throws
// std::invalid_argument naming the setting when a field was already applied (or, for
// inter_op, the arena already created) with a different value.
void applyThreadSettings(const ThreadSettings& s);

// The settings in effect (0 for those never set); intra_op reports at::get_num_threads.
ThreadSettings currentThreadSettings();

// Called when the arena is created: fixes inter_op (to the hardware thread count if
// never set) and returns it.
int lockInterOpThreads();

std::string describe(const ThreadSettings& s);

}  // namespace brisk::threading
