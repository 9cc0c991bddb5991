// EPANET's binary output file read back whole (epanet_out.hpp): for the tests and tools that
// compare netsolve's file with runepanet's.
#include <zlib.h>

#include <cstring>

#include "base/input_error.hpp"
#include "network/epanet_out.hpp"

namespace cgs::net {
namespace {

// The file's bytes, plain or gzip-compressed (zlib reads both).
std::vector<char> read_bytes(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw InputError(path, 0, "cannot open the output file");
  std::vector<char> bytes;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(f, buffer, sizeof buffer)) > 0) bytes.insert(bytes.end(), buffer, buffer + n);
  gzclose(f);
  if (n < 0) throw InputError(path, 0, "cannot read the output file");
  return bytes;
}

class Cursor {
 public:
  Cursor(const std::string& path, const std::vector<char>& bytes) : path_(path), bytes_(bytes) {}
  void need(std::size_t n) const {
    if (n > bytes_.size() - at_)
      throw InputError(path_, 0, "not an EPANET output file: it ends at byte " +
                                     std::to_string(bytes_.size()) + " before its records do");
  }
  template <typename T>
  T scalar() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, bytes_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  template <typename T>
  std::vector<T> array(std::size_t n) {
    need(n * sizeof(T));
    std::vector<T> v(n);
    if (n > 0) std::memcpy(v.data(), bytes_.data() + at_, n * sizeof(T));
    at_ += n * sizeof(T);
    return v;
  }
  std::string text(std::size_t n) {
    need(n);
    std::string s(bytes_.data() + at_, n);
    at_ += n;
    return s;
  }
  std::size_t left() const { return bytes_.size() - at_; }

 private:
  const std::string& path_;
  const std::vector<char>& bytes_;
  std::size_t at_ = 0;
};

void read_prolog(Cursor& c, EpanetOutFile& out, const std::string& path) {
  for (auto& v : out.prolog) v = c.scalar<std::int32_t>();
  if (out.prolog[0] != kEpanetOutMagic)
    throw InputError(path, 0, "not an EPANET output file (its first number is not 516114521)");
  const int nodes = out.prolog[2], tanks = out.prolog[3], links = out.prolog[4];
  if (nodes < 0 || tanks < 0 || links < 0 || out.prolog[5] < 0 || tanks > nodes)
    throw InputError(path, 0, "not an EPANET output file: negative counts");
  for (auto& t : out.title) t = c.text(80);
  out.input_file = c.text(260);
  out.report_file = c.text(260);
  out.chemical = c.text(32);
  out.quality_units = c.text(32);
  c.need(static_cast<std::size_t>(nodes + links) * 32);
  for (int i = 0; i < nodes; ++i) out.node_ids.push_back(c.text(32));
  for (int k = 0; k < links; ++k) out.link_ids.push_back(c.text(32));
  out.link_from = c.array<std::int32_t>(links);
  out.link_to = c.array<std::int32_t>(links);
  out.link_type = c.array<std::int32_t>(links);
  out.tank_nodes = c.array<std::int32_t>(tanks);
  out.tank_areas = c.array<float>(tanks);
  out.elevations = c.array<float>(nodes);
  out.lengths = c.array<float>(links);
  out.diameters = c.array<float>(links);
}

}  // namespace

std::string EpanetOutFile::text(const std::string& field) {
  return field.substr(0, field.find('\0'));
}

EpanetOutFile read_epanet_out(const std::string& path) {
  const std::vector<char> bytes = read_bytes(path);
  Cursor c(path, bytes);
  EpanetOutFile out;
  read_prolog(c, out, path);
  for (int p = 0; p < out.prolog[5]; ++p) {
    EpanetOutFile::PumpRow row;
    row.link = c.scalar<std::int32_t>();
    for (float& v : row.values) v = c.scalar<float>();
    out.energy.push_back(row);
  }
  out.demand_charge = c.scalar<float>();
  const std::size_t per_period = 4 * static_cast<std::size_t>(out.nodes()) + 8 * out.links();
  if (per_period == 0) throw InputError(path, 0, "not an EPANET output file: no nodes or links");
  const std::size_t epilog = 4 * sizeof(float) + 3 * sizeof(std::int32_t);
  if (c.left() < epilog || (c.left() - epilog) % (per_period * sizeof(float)) != 0)
    throw InputError(path, 0, "not an EPANET output file: its periods do not fill whole records");
  const std::size_t periods = (c.left() - epilog) / (per_period * sizeof(float));
  for (std::size_t p = 0; p < periods; ++p) out.periods.push_back(c.array<float>(per_period));
  for (float& v : out.reactions) v = c.scalar<float>();
  out.period_count = c.scalar<std::int32_t>();
  out.warning = c.scalar<std::int32_t>();
  out.end_magic = c.scalar<std::int32_t>();
  if (out.end_magic != kEpanetOutMagic || out.period_count != static_cast<int>(periods))
    throw InputError(path, 0, "not an EPANET output file: its epilog does not match its periods");
  return out;
}

}  // namespace cgs::net
