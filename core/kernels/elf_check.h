#pragma once
// A plugin file checked before dlopen maps it. The dynamic loader trusts the ELF headers:
// a truncated or damaged file whose segment table points past its end is mapped anyway,
// and the first read of the missing page is a SIGBUS inside dlopen, which no error
// handling can turn into a message. Reading the headers first gives one error instead.
#include <string>

namespace brisk {

// Empty when the file at `path` is a 64-bit little-endian ELF shared object for this
// machine whose program headers, section headers and the bytes they describe all lie
// within the file; otherwise what is wrong, as a phrase to follow "it": "is truncated:
// segment 2 ends at byte 81920, the file has 65536 bytes".
std::string elfSharedObjectProblem(const std::string& path);

}  // namespace brisk
