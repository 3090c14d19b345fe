#pragma once
// Whether NativeRT (torch::nativert, PT2's own C++ runtime) could run beside brisk in
// `brisk bench`. Two independent facts, both checked, never assumed: the headers brisk
// was compiled against (<torch/nativert/ModelRunner.h>), and the libtorch this process
// runs with (does a loaded libtorch*.so define a torch::nativert::ModelRunner symbol).
// PyPI's torch wheel has neither; a libtorch built with NativeRT has both. brisk bench
// reports NativeRT's row from this and does not run it: tools/bench:compare does, through
// torch._C._nativert.PyModelRunner, wherever that is more than a stub.
#include <string>
#include <vector>

namespace brisk::cli {

struct NativeRtProbe {
  bool header = false;                  // <torch/nativert/ModelRunner.h> at compile time
  std::vector<std::string> libraries;   // the loaded libtorch*.so files scanned
  std::string library;                  // the one defining a ModelRunner symbol, or ""
  std::string symbol;                   // that symbol (mangled), or ""
  std::string other_symbol;             // some other torch::nativert symbol, when no ModelRunner
  std::string scan_error;               // a library that could not be read
};

NativeRtProbe probeNativeRt();

// One line: why NativeRT's row in `brisk bench` has no numbers.
std::string describeNativeRt(const NativeRtProbe& p);

}  // namespace brisk::cli
