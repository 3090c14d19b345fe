#include "tests/fuzz/zip_archive.h"

#include <zlib.h>

#include <cstring>

namespace brisk::fuzz {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr size_t kAlign = 64;  // PyTorch aligns member data so tensors can be mmapped

uint32_t get(std::string_view b, size_t at, int width) {
  if (at + width > b.size()) throw ZipError("zip: field past the end");
  uint32_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[at + i]);
  return v;
}

void put(std::string& out, uint32_t v, int width) {
  for (int i = 0; i < width; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::string inflateRaw(std::string_view in, size_t out_size) {
  std::string out(out_size, '\0');
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) throw ZipError("zip: inflateInit failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = inflate(&zs, Z_FINISH);
  inflateEnd(&zs);
  if (rc != Z_STREAM_END || zs.total_out != out_size) throw ZipError("zip: bad deflate stream");
  return out;
}

}  // namespace

uint32_t crc32(std::string_view data) {
  return static_cast<uint32_t>(::crc32(0L, reinterpret_cast<const Bytef*>(data.data()), data.size()));
}

std::vector<ZipMember> readZip(std::string_view b) {
  if (b.size() < 22) throw ZipError("zip: too short");
  size_t end = std::string_view::npos;
  for (size_t i = b.size() - 22 + 1; i-- > 0;) {
    if (get(b, i, 4) == kEndSig) {
      end = i;
      break;
    }
  }
  if (end == std::string_view::npos) throw ZipError("zip: no end of central directory");
  uint32_t count = get(b, end + 10, 2);
  size_t at = get(b, end + 16, 4);
  std::vector<ZipMember> out;
  for (uint32_t i = 0; i < count; ++i) {
    if (get(b, at, 4) != kCentralSig) throw ZipError("zip: bad central directory entry");
    uint32_t method = get(b, at + 10, 2);
    uint32_t csize = get(b, at + 20, 4), usize = get(b, at + 24, 4);
    uint32_t nlen = get(b, at + 28, 2), elen = get(b, at + 30, 2), clen = get(b, at + 32, 2);
    size_t local = get(b, at + 42, 4);
    if (at + 46 + nlen > b.size()) throw ZipError("zip: name past the end");
    ZipMember m;
    m.name = std::string(b.substr(at + 46, nlen));
    if (get(b, local, 4) != kLocalSig) throw ZipError("zip: bad local header");
    size_t data = local + 30 + get(b, local + 26, 2) + get(b, local + 28, 2);
    if (data + csize > b.size()) throw ZipError("zip: member data past the end");
    std::string_view raw = b.substr(data, csize);
    if (method == 0) {
      m.data = std::string(raw);
    } else if (method == 8) {
      m.data = inflateRaw(raw, usize);
    } else {
      throw ZipError("zip: unsupported compression method " + std::to_string(method));
    }
    out.push_back(std::move(m));
    at += 46 + nlen + elen + clen;
  }
  return out;
}

std::string writeZip(const std::vector<ZipMember>& members) {
  std::string out, central;
  for (const ZipMember& m : members) {
    size_t offset = out.size();
    uint32_t crc = crc32(m.data);
    // Pad with an extra field ("FB", PyTorch's id) so the data starts on kAlign.
    size_t header = 30 + m.name.size();
    size_t pad = (kAlign - (offset + header + 4) % kAlign) % kAlign;
    put(out, kLocalSig, 4);
    put(out, 20, 2);  // version needed
    put(out, 0, 2);   // flags
    put(out, 0, 2);   // stored
    put(out, 0, 4);   // time, date
    put(out, crc, 4);
    put(out, static_cast<uint32_t>(m.data.size()), 4);
    put(out, static_cast<uint32_t>(m.data.size()), 4);
    put(out, static_cast<uint32_t>(m.name.size()), 2);
    put(out, static_cast<uint32_t>(pad + 4), 2);
    out += m.name;
    put(out, 0x4246, 2);  // "FB"
    put(out, static_cast<uint32_t>(pad), 2);
    out.append(pad, 'Z');
    out += m.data;

    put(central, kCentralSig, 4);
    put(central, 20, 2);  // version made by
    put(central, 20, 2);  // version needed
    put(central, 0, 2);
    put(central, 0, 2);
    put(central, 0, 4);
    put(central, crc, 4);
    put(central, static_cast<uint32_t>(m.data.size()), 4);
    put(central, static_cast<uint32_t>(m.data.size()), 4);
    put(central, static_cast<uint32_t>(m.name.size()), 2);
    put(central, 0, 2);  // extra
    put(central, 0, 2);  // comment
    put(central, 0, 2);  // disk
    put(central, 0, 2);  // internal attributes
    put(central, 0, 4);  // external attributes
    put(central, static_cast<uint32_t>(offset), 4);
    central += m.name;
  }
  size_t cd_offset = out.size();
  out += central;
  put(out, kEndSig, 4);
  put(out, 0, 2);
  put(out, 0, 2);
  put(out, static_cast<uint32_t>(members.size()), 2);
  put(out, static_cast<uint32_t>(members.size()), 2);
  put(out, static_cast<uint32_t>(central.size()), 4);
  put(out, static_cast<uint32_t>(cd_offset), 4);
  put(out, 0, 2);
  return out;
}

}  // namespace brisk::fuzz
