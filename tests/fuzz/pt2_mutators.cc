#include "tests/fuzz/pt2_mutators.h"

#include <nlohmann/json.hpp>

#include <iterator>
#include <map>
#include <string_view>
#include <vector>

#include "tests/fuzz/zip_archive.h"

namespace brisk::fuzz {
namespace {

using Json = nlohmann::json;

bool endsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

template <typename T>
const T& pick(const std::vector<T>& v, Rng& rng) {
  return v[rng.below(v.size())];
}

// Every value in the document, by JSON pointer (the seeds are a few hundred KB at most).
void collect(const Json& j, const Json::json_pointer& at, std::vector<Json::json_pointer>& out) {
  out.push_back(at);
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it) collect(it.value(), at / it.key(), out);
  else if (j.is_array())
    for (size_t i = 0; i < j.size(); ++i) collect(j[i], at / i, out);
}

// Pointers whose last token is `key` (e.g. every "target", every "sizes").
std::vector<Json::json_pointer> withKey(const std::vector<Json::json_pointer>& all, const std::string& key) {
  std::vector<Json::json_pointer> out;
  for (const auto& p : all)
    if (!p.empty() && p.back() == key) out.push_back(p);
  return out;
}

Json otherType(const Json& v, Rng& rng) {
  static const std::vector<Json> kinds = {Json("x"), Json(0), Json(nullptr), Json::array(), Json::object(),
                                          Json(true), Json(1.5), Json::array({1, "a", nullptr})};
  Json r = pick(kinds, rng);
  return r.type() == v.type() ? Json("not a " + std::string(v.type_name())) : r;
}

Json interestingNumber(Rng& rng) {
  static const std::vector<Json> v = {Json(0), Json(-1), Json(1), Json(INT64_MAX), Json(INT64_MIN),
                                      Json(uint64_t{18446744073709551615ull}), Json(int64_t{1} << 40),
                                      Json(1e300), Json(-0.5), Json("NaN"), Json("Infinity"), Json("-Infinity"),
                                      Json(0x7fffffff), Json(99)};
  return pick(v, rng);
}

// "[[[[...]]]]": deep enough that a parser or walker that recurses per level overflows
// an 8 MB stack.
std::string deepNesting(size_t levels) { return std::string(levels, '[') + std::string(levels, ']'); }

std::string mutateSpecText(const std::string& s, Rng& rng, std::string& what) {
  switch (rng.below(7)) {
    case 0: what += "spec truncated"; return s.substr(0, s.size() / 2);
    case 1: what += "spec := deep nesting"; return "[1, " + deepNesting(100000) + "]";
    case 2: what += "spec := [1, null]"; return "[1, null]";
    case 3: what += "spec version := 2"; return s.empty() ? s : "[2" + s.substr(std::min(s.size(), size_t{2}));
    case 4: {
      what += "spec: a type renamed";
      std::string t = s;
      size_t p = t.find("builtins.");
      if (p != std::string::npos) t.replace(p, 9, "nosuch.");
      return t;
    }
    case 5: {
      what += "spec: a children_spec emptied";
      std::string t = s;
      size_t p = t.find("\"children_spec\": [{");
      if (p != std::string::npos) t.insert(p + 17, "]");
      return t;
    }
    default: {
      what += "spec: byte flip";
      std::string t = s;
      if (!t.empty()) t[rng.below(t.size())] = "{}[]\",:0a\\"[rng.below(10)];
      return t;
    }
  }
}

}  // namespace

std::string mutateJson(const std::string& text, Rng& rng, std::string& what) {
  Json doc = Json::parse(text);
  std::vector<Json::json_pointer> all;
  collect(doc, Json::json_pointer(), all);
  const size_t kind = rng.below(13);
  auto pointed = [&](const std::vector<Json::json_pointer>& from) -> const Json::json_pointer* {
    return from.empty() ? nullptr : &pick(from, rng);
  };
  const Json::json_pointer& any = all[1 + rng.below(all.size() - 1)];
  switch (kind) {
    case 0: {  // delete a key or an element
      Json& parent = doc[any.parent_pointer()];
      what += "delete " + any.to_string();
      if (parent.is_object()) parent.erase(any.back());
      else parent.erase(std::stoul(any.back()));
      break;
    }
    case 1:
      what += "retype " + any.to_string();
      doc[any] = otherType(doc[any], rng);
      break;
    case 2: {  // a number elsewhere: sizes, strides, dtype, indices, versions
      std::vector<Json::json_pointer> nums;
      for (const auto& p : all)
        if (doc[p].is_number()) nums.push_back(p);
      const auto* p = pointed(nums);
      if (!p) p = &any;
      Json v = interestingNumber(rng);
      what += "number " + p->to_string() + " := " + v.dump();
      doc[*p] = v;
      break;
    }
    case 3: {  // a node's target
      std::vector<Json::json_pointer> targets = withKey(all, "target");
      const auto* p = pointed(targets);
      if (!p) { what += "(no target) retype root member"; doc[any] = nullptr; break; }
      static const std::vector<std::string> kOps = {
          "torch.ops.aten.no_such_op.default", "torch.ops.higher_order.while_loop", "torch.ops.higher_order.cond",
          "torch.ops.aten.add.Tensor", "torch.ops.aten.linear.default", "torch.ops.aten.relu.default",
          "torch.ops.aten.cat.default", "torch.ops.aten.view.default", "_operator.getitem", "_operator.add",
          "torch.ops.aten.add", "torch.ops.aten..default", "", "torch.ops.prims.sum.default"};
      std::string t = rng.chance(30) ? doc[pick(targets, rng)].dump() : pick(kOps, rng);
      if (!t.empty() && t[0] == '"') t = t.substr(1, t.size() - 2);
      what += "target " + p->to_string() + " := '" + t + "'";
      doc[*p] = t;
      break;
    }
    case 4: {  // schema_version
      std::vector<Json::json_pointer> vs = withKey(all, "schema_version");
      const auto* p = pointed(vs);
      if (!p) { what += "(no schema_version) number"; doc[any] = -1; break; }
      Json v = rng.chance(50) ? Json{{"major", interestingNumber(rng)}, {"minor", 0}} : otherType(doc[*p], rng);
      what += "schema_version := " + v.dump();
      doc[*p] = v;
      break;
    }
    case 5: case 6: {  // drop or duplicate a node, an input, an output
      std::vector<Json::json_pointer> lists;
      for (const char* key : {"nodes", "inputs", "outputs", "input_specs", "output_specs", "args", "children_spec"})
        for (const auto& p : withKey(all, key))
          if (doc[p].is_array() && !doc[p].empty()) lists.push_back(p);
      const auto* p = pointed(lists);
      if (!p) { what += "(no lists) null"; doc[any] = nullptr; break; }
      Json& l = doc[*p];
      size_t i = rng.below(l.size());
      if (kind == 5) {
        what += "drop " + p->to_string() + "/" + std::to_string(i);
        l.erase(i);
      } else {
        what += "duplicate " + p->to_string() + "/" + std::to_string(i);
        l.insert(l.begin() + static_cast<std::ptrdiff_t>(rng.below(l.size() + 1)), Json(l[i]));
      }
      break;
    }
    case 7: {  // swap two argument names of a node, or two value names
      std::vector<Json::json_pointer> names = withKey(all, "name");
      if (names.size() < 2) { what += "(no names) null"; doc[any] = nullptr; break; }
      const auto& a = pick(names, rng);
      const auto& b = pick(names, rng);
      what += "swap " + a.to_string() + " and " + b.to_string();
      Json t = doc[a];
      doc[a] = doc[b];
      doc[b] = t;
      break;
    }
    case 8: {  // the pytree specs: JSON inside a JSON string
      std::vector<Json::json_pointer> specs;
      for (const char* key : {"in_spec", "out_spec", "context"})
        for (const auto& p : withKey(all, key))
          if (doc[p].is_string()) specs.push_back(p);
      const auto* p = pointed(specs);
      if (!p) { what += "(no specs) retype"; doc[any] = otherType(doc[any], rng); break; }
      what += p->to_string() + ": ";
      doc[*p] = mutateSpecText(doc[*p].get<std::string>(), rng, what);
      break;
    }
    case 9: case 10: {  // tensor_meta: sizes, strides, storage_offset, dtype, layout, device
      std::vector<Json::json_pointer> metas;
      for (const char* key : {"sizes", "strides", "storage_offset", "dtype", "layout", "device"})
        for (const auto& p : withKey(all, key)) metas.push_back(p);
      const auto* p = pointed(metas);
      if (!p) { what += "(no tensor_meta) retype"; doc[any] = otherType(doc[any], rng); break; }
      Json& v = doc[*p];
      if (v.is_array() && !v.empty() && rng.chance(70)) {
        size_t i = rng.below(v.size());
        Json n = interestingNumber(rng);
        what += p->to_string() + "/" + std::to_string(i) + " := " + n.dump();
        v[i] = v[i].is_object() && v[i].contains("as_int") ? Json{{"as_int", n}} : n;
      } else if (v.is_array() && rng.chance(50)) {
        what += p->to_string() + ": one more dim";
        v.push_back(v.empty() ? Json{{"as_int", 1}} : v[0]);
      } else if (v.is_object() && v.contains("as_int")) {
        Json n = interestingNumber(rng);
        what += p->to_string() + ".as_int := " + n.dump();
        v["as_int"] = n;
      } else {
        Json n = rng.chance(50) ? interestingNumber(rng) : otherType(v, rng);
        what += p->to_string() + " := " + n.dump();
        v = n;
      }
      break;
    }
    case 11: {  // delete or misspell a key, chosen among the distinct key names: case 0
                // picks among all values, so rare structural keys (module_call_graph's
                // "signature", "in_spec") come up as seldom as they occur; here as often as
                // "name". (libFuzzer found the root signature's key renamed crashing load.)
      std::map<std::string, std::vector<Json::json_pointer>> by_key;
      for (const auto& p : all)
        if (!p.empty() && doc[p.parent_pointer()].is_object()) by_key[p.back()].push_back(p);
      if (by_key.empty()) { what += "(no keys) retype"; doc[any] = otherType(doc[any], rng); break; }
      auto named = by_key.begin();
      std::advance(named, static_cast<std::ptrdiff_t>(rng.below(by_key.size())));
      const Json::json_pointer p = pick(named->second, rng);
      Json& parent = doc[p.parent_pointer()];
      Json value = std::move(parent[p.back()]);
      parent.erase(p.back());
      if (rng.chance(50)) {
        const std::string misspelled(p.back().rbegin(), p.back().rend());
        what += "key " + p.to_string() + " renamed '" + misspelled + "'";
        parent[misspelled + (misspelled == p.back() ? "_" : "")] = std::move(value);
      } else {
        what += "key " + p.to_string() + " deleted";
      }
      break;
    }
    default: {  // nest 100000 levels deep at some value: spliced in as text
      what += "deep nesting at " + any.to_string();
      const std::string marker = "\"@@brisk_fuzz_nest@@\"";
      doc[any] = "@@brisk_fuzz_nest@@";
      std::string out = doc.dump();
      out.replace(out.find(marker), marker.size(), deepNesting(100000));
      return out;
    }
  }
  return doc.dump();
}

Mutation mutatePt2Archive(const std::string& seed, Rng& rng) {
  std::vector<ZipMember> members = readZip(seed);
  std::vector<size_t> programs, configs, weights, all;
  for (size_t k = 0; k < members.size(); ++k) {
    const std::string& n = members[k].name;
    all.push_back(k);
    if (contains(n, "/models/") && endsWith(n, ".json")) programs.push_back(k);
    else if (endsWith(n, "_config.json")) configs.push_back(k);
    else if (contains(n, "/data/weights/weight_") || contains(n, "/data/constants/")) weights.push_back(k);
  }
  Mutation m;
  const size_t kind = rng.below(10);
  if (kind <= 4 || (kind <= 6 && configs.empty()) || (kind == 7 && weights.empty())) {
    size_t k = pick(programs, rng);
    m.description = "member " + members[k].name + ": ";
    members[k].data = mutateJson(members[k].data, rng, m.description);
  } else if (kind <= 6) {
    size_t k = pick(configs, rng);
    m.description = "member " + members[k].name + ": ";
    members[k].data = mutateJson(members[k].data, rng, m.description);
  } else if (kind == 7) {  // a weight record's bytes
    size_t k = pick(weights, rng);
    std::string& d = members[k].data;
    m.description = "member " + members[k].name + ": ";
    switch (rng.below(4)) {
      case 0: m.description += "truncated to half"; d.resize(d.size() / 2); break;
      case 1: m.description += "empty"; d.clear(); break;
      case 2: m.description += "truncated by one byte"; if (!d.empty()) d.pop_back(); break;
      default:
        m.description += "byte flip";
        if (!d.empty()) d[rng.below(d.size())] ^= static_cast<char>(1u << rng.below(8));
    }
  } else if (kind == 8) {  // members: archive_format, the program, weight files
    size_t k = pick(all, rng);
    std::string& n = members[k].name;
    switch (rng.below(5)) {
      case 0: {
        for (size_t i = 0; i < members.size(); ++i)
          if (endsWith(members[i].name, "/archive_format")) k = i;
        const std::string v = rng.chance(50) ? "pt3" : "";
        m.description = "member " + members[k].name + " := '" + v + "'";
        members[k].data = v;
        break;
      }
      case 1: {
        size_t p = pick(programs, rng);
        m.description = "program " + members[p].name + " renamed to models/other.json";
        members[p].name = members[p].name.substr(0, members[p].name.rfind('/')) + "/other.json";
        if (rng.chance(50)) {  // and a second program: which one runs is the caller's choice
          members.push_back(members[p]);
          members.back().name = members[p].name.substr(0, members[p].name.rfind('/')) + "/model.json";
          m.description += " plus a copy as models/model.json";
        }
        break;
      }
      case 2: {
        size_t w = weights.empty() ? k : pick(weights, rng);
        m.description = "member " + members[w].name + " removed";
        members.erase(members.begin() + static_cast<std::ptrdiff_t>(w));
        break;
      }
      case 3:
        m.description = "member " + n + " renamed";
        n += ".renamed";
        break;
      default:
        m.description = "member " + n + " removed";
        members.erase(members.begin() + static_cast<std::ptrdiff_t>(k));
    }
  } else {
    m.bytes = mutateRawArchive(seed, rng, m.description);
    return m;
  }
  m.bytes = writeZip(members);
  return m;
}

}  // namespace brisk::fuzz
