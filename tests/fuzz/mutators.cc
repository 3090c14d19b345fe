#include "tests/fuzz/mutators.h"

#include <cctype>
#include <cstring>
#include <string_view>
#include <vector>

#include "tests/fuzz/pickle_ops.h"
#include "tests/fuzz/zip_archive.h"

namespace brisk::fuzz {
namespace {

bool endsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "mlp/data/3" -> true: PyTorch's tensor storage records.
bool isTensorData(const std::string& name) {
  size_t p = name.find("/data/");
  return p != std::string::npos && name.find('/', p + 6) == std::string::npos;
}

template <typename T>
const T& pick(const std::vector<T>& v, Rng& rng) {
  return v[rng.below(v.size())];
}

std::string hex(uint8_t c) {
  const char* d = "0123456789abcdef";
  return std::string("0x") + d[c >> 4] + d[c & 15];
}

std::string flipBytes(std::string s, Rng& rng, std::string& what) {
  if (s.empty()) {
    what += "flip (empty: append a byte)";
    return s + static_cast<char>(rng.below(256));
  }
  size_t n = 1 + rng.below(4);
  what += "flip " + std::to_string(n) + " bytes at";
  for (size_t i = 0; i < n; ++i) {
    size_t at = rng.below(s.size());
    s[at] = static_cast<char>(s[at] ^ (1u << rng.below(8)));
    what += " " + std::to_string(at);
  }
  return s;
}

// Little-endian integer operand values that sit on boundaries the readers check.
std::string interestingInt(int width, Rng& rng) {
  static const std::vector<int64_t> values = {0, 1, -1, 2, 7, 255, 256, 65535, 0x7fffffff,
                                              -0x7fffffff - 1, 1 << 20, 1 << 30, 3};
  int64_t v = rng.chance(70) ? pick(values, rng) : static_cast<int64_t>(rng.next());
  std::string out;
  for (int i = 0; i < width; ++i) out.push_back(static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff));
  return out;
}

std::string counted(uint8_t code, int width, const std::string& payload) {
  std::string out(1, static_cast<char>(code));
  for (int i = 0; i < width; ++i) out.push_back(static_cast<char>((payload.size() >> (8 * i)) & 0xff));
  return out + payload;
}

// Strings a pickle from torch.save or TorchScript might hold, and neighbours of them.
const std::vector<std::string>& stringDictionary() {
  static const std::vector<std::string> v = {
      "FloatStorage", "LongStorage", "HalfStorage", "BoolStorage", "ByteStorage", "DoubleStorage",
      "BFloat16Storage", "ComplexFloatStorage", "QInt8Storage", "NoSuchStorage", "cpu", "cuda", "meta",
      "cuda:7", "", "args", "kwargs", "0", "1", "99", "-1", "../../etc/passwd", "data/0",
      "__torch__.Foo", "__torch__.torch.nn.modules.linear.Linear", std::string(300, 'x')};
  return v;
}

const std::vector<std::string>& globalDictionary() {
  static const std::vector<std::string> v = {
      "torch._utils\n_rebuild_tensor_v2\n", "torch._utils\n_rebuild_parameter\n",
      "torch._utils\n_rebuild_qtensor\n", "torch._utils\n_rebuild_sparse_tensor\n",
      "torch._utils\n_rebuild_tensor\n", "torch\nFloatStorage\n", "torch\nLongStorage\n",
      "torch\nHalfStorage\n", "torch\nBoolStorage\n", "torch\nNoSuchStorage\n", "collections\nOrderedDict\n",
      "builtins\nset\n", "torch.jit._pickle\nbuild_intlist\n", "torch.jit._pickle\nbuild_tensorlist\n",
      "torch.jit._pickle\nrestore_type_tag\n", "torch\ndevice\n", "torch\nSize\n", "__torch__\nNoSuchClass\n",
      "os\nsystem\n"};
  return v;
}

std::string_view opText(const std::string& p, const PickleOp& op) { return std::string_view(p).substr(op.pos, op.len); }

std::string opName(const std::string& p, const PickleOp& op) {
  return hex(op.code) + (std::isprint(op.code) ? std::string(" '") + static_cast<char>(op.code) + "'" : "");
}

}  // namespace

std::string mutatePickle(const std::string& p, Rng& rng, std::string& what) {
  std::vector<PickleOp> ops = scanPickle(p);
  if (ops.empty()) return flipBytes(p, rng, what);
  size_t i = rng.below(ops.size());
  const PickleOp& op = ops[i];
  std::string before = p.substr(0, op.pos), self(opText(p, op)), after = p.substr(op.pos + op.len);
  std::string at = " at op #" + std::to_string(i) + " (" + opName(p, op) + ")";
  // Ops with the operand kind each mutation needs (falls back to a plain opcode change).
  auto find = [&](const std::string& codes) -> long {
    std::vector<size_t> hits;
    for (size_t k = 0; k < ops.size(); ++k)
      if (ops[k].known && codes.find(static_cast<char>(ops[k].code)) != std::string::npos) hits.push_back(k);
    return hits.empty() ? -1 : static_cast<long>(pick(hits, rng));
  };
  auto replaceOp = [&](size_t k, const std::string& text) {
    return p.substr(0, ops[k].pos) + text + p.substr(ops[k].pos + ops[k].len);
  };
  switch (rng.below(13)) {
    case 0: {
      uint8_t c = pick(stackOpcodes(), rng);
      what += "pickle: replace" + at + " with " + hex(c);
      return before + static_cast<char>(c) + after;
    }
    case 1:
      what += "pickle: delete" + at;
      return before + after;
    case 2:
      what += "pickle: duplicate" + at;
      return before + self + self + after;
    case 3: {
      if (i + 1 >= ops.size()) break;
      what += "pickle: swap with next" + at;
      return before + std::string(opText(p, ops[i + 1])) + self + p.substr(ops[i + 1].pos + ops[i + 1].len);
    }
    case 4: {  // integers: shapes, strides, offsets, numel
      long k = find(std::string("KMJ") + static_cast<char>(0x8a));
      if (k < 0) break;
      uint8_t c = ops[k].code;
      int width = c == 'K' ? 1 : c == 'M' ? 2 : c == 'J' ? 4 : 8;
      std::string text = static_cast<char>(c) + (c == 0x8a ? std::string(1, 8) : "") + interestingInt(width, rng);
      what += "pickle: integer op #" + std::to_string(k) + " (" + opName(p, ops[k]) + ") := " + hex(text[1]) + "...";
      return replaceOp(k, text);
    }
    case 5: {  // memo references
      long k = find("qhjr");
      if (k < 0) break;
      uint8_t c = ops[k].code;
      int width = (c == 'q' || c == 'h') ? 1 : 4;
      what += "pickle: memo op #" + std::to_string(k) + " index changed";
      return replaceOp(k, static_cast<char>(c) + interestingInt(width, rng));
    }
    case 6: {  // strings: storage types (dtypes), devices, keys, record names
      long k = find("X");
      if (k < 0) break;
      const std::string& s = pick(stringDictionary(), rng);
      what += "pickle: string op #" + std::to_string(k) + " := '" + s.substr(0, 20) + "'";
      return replaceOp(k, counted('X', 4, s));
    }
    case 7: {  // a string whose length field lies
      long k = find("X");
      if (k < 0) break;
      std::string text(opText(p, ops[k]));
      text.replace(1, 4, interestingInt(4, rng));
      what += "pickle: string op #" + std::to_string(k) + " length field changed";
      return replaceOp(k, text);
    }
    case 8: {
      long k = find("c");
      if (k < 0) break;
      const std::string& g = pick(globalDictionary(), rng);
      what += "pickle: global op #" + std::to_string(k) + " := " + g.substr(0, g.find('\n')) + "." +
              g.substr(g.find('\n') + 1, g.size() - g.find('\n') - 2);
      return replaceOp(k, "c" + g);
    }
    case 9:
      what += "pickle: truncate before" + at;
      return before;
    case 10: {  // nesting: a few container/stack ops inserted
      size_t n = 1 + rng.below(4);
      std::string ins;
      for (size_t k = 0; k < n; ++k) ins.push_back(static_cast<char>(pick(stackOpcodes(), rng)));
      what += "pickle: insert " + std::to_string(n) + " stack ops before" + at;
      return before + ins + self + after;
    }
    case 11: {  // deep nesting: a value wrapped in D lists ([[[...v...]]])
      long k = find(std::string("KMJNX") + static_cast<char>(0x88) + static_cast<char>(0x89));
      if (k < 0) break;
      static const std::vector<size_t> depths = {2, 100, 5000, 200000};
      size_t d = pick(depths, rng);
      what += "pickle: op #" + std::to_string(k) + " nested in " + std::to_string(d) + " lists";
      return replaceOp(k, std::string(d, ']') + std::string(opText(p, ops[k])) + std::string(d, 'a'));
    }
    default:
      break;
  }
  what += "pickle: ";
  return flipBytes(p, rng, what);
}

std::string mutateSource(const std::string& src, Rng& rng, std::string& what) {
  // Tokens: identifiers, numbers, runs of spaces, newlines, single punctuation characters.
  struct Tok {
    size_t pos, len;
    bool ident, number;
  };
  std::vector<Tok> toks;
  for (size_t i = 0; i < src.size();) {
    size_t j = i + 1;
    unsigned char c = src[i];
    bool ident = std::isalpha(c) || c == '_', number = std::isdigit(c);
    if (ident || number) {
      while (j < src.size() && (std::isalnum(static_cast<unsigned char>(src[j])) || src[j] == '_' ||
                                (number && src[j] == '.')))
        ++j;
    } else if (c == ' ') {
      while (j < src.size() && src[j] == ' ') ++j;
    }
    toks.push_back(Tok{i, j - i, ident, number});
    i = j;
  }
  if (toks.empty()) return flipBytes(src, rng, what);
  std::vector<size_t> idents, numbers;
  for (size_t k = 0; k < toks.size(); ++k) {
    if (toks[k].ident) idents.push_back(k);
    if (toks[k].number) numbers.push_back(k);
  }
  auto text = [&](size_t k) { return src.substr(toks[k].pos, toks[k].len); };
  auto replaceTok = [&](size_t k, const std::string& t) {
    return src.substr(0, toks[k].pos) + t + src.substr(toks[k].pos + toks[k].len);
  };
  size_t k = rng.below(toks.size());
  switch (rng.below(9)) {
    case 0: {
      if (idents.size() < 2) break;
      size_t a = pick(idents, rng), b = pick(idents, rng);
      if (a > b) std::swap(a, b);
      if (a == b) break;
      what += "source: swap identifiers '" + text(a) + "' and '" + text(b) + "'";
      return src.substr(0, toks[a].pos) + text(b) + src.substr(toks[a].pos + toks[a].len, toks[b].pos - toks[a].pos - toks[a].len) +
             text(a) + src.substr(toks[b].pos + toks[b].len);
    }
    case 1: {
      if (idents.empty()) break;
      size_t a = pick(idents, rng), b = pick(idents, rng);
      what += "source: identifier '" + text(a) + "' := '" + text(b) + "'";
      return replaceTok(a, text(b));
    }
    case 2:
      what += "source: delete token '" + text(k) + "' at " + std::to_string(toks[k].pos);
      return replaceTok(k, "");
    case 3:
      what += "source: duplicate token '" + text(k) + "' at " + std::to_string(toks[k].pos);
      return replaceTok(k, text(k) + text(k));
    case 4:
      what += "source: truncate at " + std::to_string(toks[k].pos);
      return src.substr(0, toks[k].pos);
    case 5: {
      if (numbers.empty()) break;
      static const std::vector<std::string> nums = {"0", "-1", "99999999999999999999999", "1e309", "2147483648",
                                                    "-9223372036854775808", "0.0", "1"};
      size_t a = pick(numbers, rng);
      const std::string& n = pick(nums, rng);
      what += "source: number '" + text(a) + "' := " + n;
      return replaceTok(a, n);
    }
    case 6: {
      static const std::vector<std::string> toksIn = {"(", ")", ":", "\n", "    ", "[", "]", ",", "=", "return ",
                                                      "def ", "torch.", "None", "\"", "#"};
      const std::string& t = pick(toksIn, rng);
      what += "source: insert '" + t + "' at " + std::to_string(toks[k].pos);
      return src.substr(0, toks[k].pos) + t + src.substr(toks[k].pos);
    }
    case 7: {  // a whole line deleted or duplicated
      size_t start = src.rfind('\n', toks[k].pos);
      start = start == std::string::npos ? 0 : start + 1;
      size_t end = src.find('\n', toks[k].pos);
      end = end == std::string::npos ? src.size() : end + 1;
      bool dup = rng.chance(50);
      what += std::string("source: ") + (dup ? "duplicate" : "delete") + " line at " + std::to_string(start);
      std::string line = src.substr(start, end - start);
      return src.substr(0, start) + (dup ? line + line : "") + src.substr(end);
    }
    default:
      break;
  }
  what += "source: ";
  return flipBytes(src, rng, what);
}

std::string mutateRawArchive(const std::string& a, Rng& rng, std::string& what) {
  // Offsets of every zip header, so header fields (sizes, CRCs, offsets, counts) get hit
  // far more often than uniform flips would.
  std::vector<size_t> headers;
  for (size_t i = 0; i + 4 <= a.size(); ++i)
    if (a[i] == 'P' && a[i + 1] == 'K' && (a[i + 2] == 1 || a[i + 2] == 3 || a[i + 2] == 5) &&
        (a[i + 3] == 2 || a[i + 3] == 4 || a[i + 3] == 6))
      headers.push_back(i);
  switch (rng.below(5)) {
    case 0: {
      size_t keep = rng.below(a.size());
      what += "raw: truncate to " + std::to_string(keep) + " of " + std::to_string(a.size()) + " bytes";
      return a.substr(0, keep);
    }
    case 1:
    case 2: {
      if (headers.empty()) break;
      size_t h = pick(headers, rng);
      size_t field = h + 4 + 2 * rng.below(20);  // header fields are 2- and 4-byte aligned runs
      if (field + 4 > a.size()) break;
      std::string out = a;
      out.replace(field, 4, interestingInt(4, rng));
      what += "raw: header at " + std::to_string(h) + ": 4 bytes at +" + std::to_string(field - h) + " set";
      return out;
    }
    case 3: {
      std::string out = a;
      size_t at = rng.below(a.size()), n = 1 + rng.below(64);
      out.replace(at, std::min(n, a.size() - at), std::string(std::min(n, a.size() - at), '\xff'));
      what += "raw: " + std::to_string(n) + " bytes of 0xff at " + std::to_string(at);
      return out;
    }
    default:
      break;
  }
  what += "raw: ";
  return flipBytes(a, rng, what);
}

namespace {

// Rewrites one member of the archive with `fn`, or does an archive-level edit, and
// rebuilds the archive with valid CRCs.
template <typename Pred>
Mutation mutateMember(const std::vector<ZipMember>& members, Rng& rng, Pred want,
                      std::string (*fn)(const std::string&, Rng&, std::string&)) {
  std::vector<size_t> hits;
  for (size_t k = 0; k < members.size(); ++k)
    if (want(members[k].name)) hits.push_back(k);
  std::vector<ZipMember> out = members;
  Mutation m;
  if (hits.empty()) return m;
  size_t k = pick(hits, rng);
  m.description = "member " + members[k].name + ": ";
  out[k].data = fn(members[k].data, rng, m.description);
  m.bytes = writeZip(out);
  return m;
}

std::string mutateTensorData(const std::string& d, Rng& rng, std::string& what) {
  switch (rng.below(4)) {
    case 0:
      what += "tensor data: truncated to half";
      return d.substr(0, d.size() / 2);
    case 1:
      what += "tensor data: empty";
      return "";
    case 2:
      what += "tensor data: 13 bytes appended";
      return d + std::string(13, '\x7f');
    default:
      what += "tensor data: ";
      return flipBytes(d, rng, what);
  }
}

std::string mutateVersion(const std::string&, Rng& rng, std::string& what) {
  static const std::vector<std::string> v = {"0", "1", "2", "3", "10", "99", "-1", "", "abc",
                                             "18446744073709551616", "3\n\n", " 3"};
  const std::string& s = pick(v, rng);
  what += "version := '" + s + "'";
  return s;
}

Mutation archiveEdit(std::vector<ZipMember> members, Rng& rng) {
  Mutation m;
  size_t k = rng.below(members.size());
  switch (rng.below(3)) {
    case 0:
      m.description = "archive: member " + members[k].name + " removed";
      members.erase(members.begin() + k);
      break;
    case 1:
      m.description = "archive: member " + members[k].name + " duplicated";
      members.push_back(members[k]);
      break;
    default: {
      size_t j = rng.below(members.size());
      m.description = "archive: members " + members[k].name + " and " + members[j].name + " swap contents";
      std::swap(members[k].data, members[j].data);
      break;
    }
  }
  m.bytes = writeZip(members);
  return m;
}

}  // namespace

Mutation mutateModelArchive(const std::string& seed, Rng& rng) {
  std::vector<ZipMember> members = readZip(seed);
  auto isPickle = [](const std::string& n) { return endsWith(n, "/data.pkl") || endsWith(n, "/constants.pkl"); };
  auto isSource = [](const std::string& n) { return endsWith(n, ".py"); };
  auto isVersion = [](const std::string& n) { return endsWith(n, "/version"); };
  for (int attempt = 0; attempt < 8; ++attempt) {
    Mutation m;
    switch (rng.below(10)) {
      case 0: case 1: case 2: m = mutateMember(members, rng, isPickle, mutatePickle); break;
      case 3: case 4: case 5: m = mutateMember(members, rng, isSource, mutateSource); break;
      case 6: m = mutateMember(members, rng, isTensorData, mutateTensorData); break;
      case 7: m = mutateMember(members, rng, isVersion, mutateVersion); break;
      case 8: m = archiveEdit(members, rng); break;
      default:
        m.bytes = mutateRawArchive(seed, rng, m.description);
        break;
    }
    if (!m.description.empty()) return m;
  }
  Mutation m;
  m.bytes = mutateRawArchive(seed, rng, m.description);
  return m;
}

Mutation mutateInputsFile(const std::string& seed, Rng& rng) {
  std::vector<ZipMember> members = readZip(seed);
  auto isPickle = [](const std::string& n) { return endsWith(n, "/data.pkl"); };
  Mutation m;
  switch (rng.below(10)) {
    case 0: case 1: case 2: case 3: case 4: case 5: m = mutateMember(members, rng, isPickle, mutatePickle); break;
    case 6: case 7: m = mutateMember(members, rng, isTensorData, mutateTensorData); break;
    case 8: m = archiveEdit(members, rng); break;
    default: break;
  }
  if (m.description.empty()) m.bytes = mutateRawArchive(seed, rng, m.description);
  return m;
}

}  // namespace brisk::fuzz
