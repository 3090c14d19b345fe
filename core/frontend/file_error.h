#pragma once
// One way to name the file a loading error is about: a model (Error::Where, so the
// message reads like every other error about that model) or an inputs file.
#include <string>

#include "core/common/error.h"

namespace brisk {

inline Error fileError(const std::string& file, bool is_model, const std::string& message) {
  if (is_model) return Error(Error::Where{file, "", ""}, message);
  return Error("inputs file '" + file + "': " + message);
}

}  // namespace brisk
