#include "delegates/onednn/shape_cache.h"

#include <glog/logging.h>

namespace brisk::onednn {

void warnShapeOverflow(size_t slots) {
  LOG_FIRST_N(WARNING, 1) << "brisk: onednn: a partition met more than " << slots
                          << " input shapes; further shapes prepare their kernel and weight on every call";
}

}  // namespace brisk::onednn
