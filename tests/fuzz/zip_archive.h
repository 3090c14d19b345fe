#pragma once
// A small zip reader/writer for the fuzz driver: enough of the format to take a
// torch.jit.save / torch.save archive apart into members, mutate one, and put it back
// together with correct sizes and CRCs, so the mutation reaches the parser behind the zip
// layer instead of being rejected by it. (Raw byte mutations of the archive itself are
// done separately, on purpose without fixing anything up.)
//
// Reads stored and deflated members (torch 2.x deflates code/*.py); writes every member
// stored, 64-byte aligned like PyTorch's writer, without data descriptors.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace brisk::fuzz {

struct ZipMember {
  std::string name;  // full path inside the archive, e.g. "mlp/data.pkl"
  std::string data;  // uncompressed contents
};

struct ZipError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws ZipError on anything it cannot parse (the seeds always parse).
std::vector<ZipMember> readZip(std::string_view bytes);
std::string writeZip(const std::vector<ZipMember>& members);

uint32_t crc32(std::string_view data);

}  // namespace brisk::fuzz
