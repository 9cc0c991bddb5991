#include "network/results_io.hpp"

#include <zlib.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "base/atomic_file.hpp"
#include "formats/types.hpp"

namespace cgs::net {

double user_head(const Network& net, double head_ft) { return head_ft * net.units.length; }

double user_pressure(const Network& net, int node, double head_ft) {
  return (head_ft - net.nodes[node].elevation) * net.units.pressure;
}

double user_flow(const Network& net, double flow_cfs) { return flow_cfs * net.units.flow; }

// As EPANET reports it: the head difference across the link (signed for pumps), 0 when closed.
double link_headloss(const Network& net, const HydraulicResults& r, int link) {
  if (is_closed(r.status[link])) return 0.0;
  const Link& l = net.links[link];
  const double dh = r.head[l.from] - r.head[l.to];
  return user_head(net, l.type == LinkType::pump ? dh : std::abs(dh));
}

namespace {

std::string format(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.10g", v);
  return buffer;
}

std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "cannot open reference results");
  std::vector<std::vector<std::string>> rows;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> fields;
    std::stringstream ss(line);
    std::string field;
    while (std::getline(ss, field, ',')) fields.push_back(field);
    rows.push_back(fields);
  }
  return rows;
}

// Every element's ID as a CSV field, once per file.
template <typename Element>
std::vector<std::string> csv_ids(const std::vector<Element>& elements) {
  std::vector<std::string> ids;
  ids.reserve(elements.size());
  for (const Element& e : elements) ids.push_back(csv_field(e.id));
  return ids;
}

}  // namespace

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

void write_nodes_csv(const std::string& path, const Network& net, const HydraulicResults& r) {
  std::ostringstream out;
  out << "node,type,head,pressure,demand\n";
  for (std::size_t i = 0; i < net.nodes.size(); ++i) {
    const int n = static_cast<int>(i);
    out << csv_field(net.nodes[i].id) << ',' << to_string(net.nodes[i].type) << ','
        << format(user_head(net, r.head[i])) << ',' << format(user_pressure(net, n, r.head[i]))
        << ',' << format(user_flow(net, r.demand[i])) << '\n';
  }
  write_file_atomically(path, out.str());  // whole or not at all
}

void write_links_csv(const std::string& path, const Network& net, const HydraulicResults& r) {
  std::ostringstream out;
  out << "link,type,flow,headloss,status\n";
  for (std::size_t k = 0; k < net.links.size(); ++k) {
    out << csv_field(net.links[k].id) << ',' << to_string(net.links[k].type) << ','
        << format(user_flow(net, r.flow[k])) << ','
        << format(link_headloss(net, r, static_cast<int>(k))) << ','
        << (is_closed(r.status[k]) ? "closed" : "open") << '\n';
  }
  write_file_atomically(path, out.str());
}

double flow_noise_floor(const Network& net) { return 1e-5 * net.units.flow; }

ReferenceComparison compare_with_reference(const Network& net, const HydraulicResults& r,
                                           const std::string& nodes_csv,
                                           const std::string& links_csv, double head_tolerance,
                                           double flow_tolerance, double flow_noise_floor) {
  ReferenceComparison c;
  std::vector<bool> cut(net.nodes.size(), false);
  for (int n : r.cut_off_nodes) cut[n] = true;
  auto fail = [&](const std::string& what) {
    if (c.failures.size() < 20) c.failures.push_back(what);
    ++c.failure_count;
  };
  for (const auto& row : read_csv(nodes_csv)) {
    const int n = net.find_node(row.at(0));
    if (n < 0) {
      fail("node " + row[0] + " is in the reference but not in the network");
      continue;
    }
    if (cut[n]) {
      ++c.cut_off_skipped;
      continue;
    }
    const double expected = std::stod(row.at(2)), ours = user_head(net, r.head[n]);
    const double error = std::abs(ours - expected);
    ++c.nodes_compared;
    if (error > c.max_head_error) c.max_head_error = error, c.worst_node = row[0];
    if (!(error <= head_tolerance))
      fail("node " + row[0] + ": head " + format(ours) + " vs EPANET " + format(expected));
  }
  for (const auto& row : read_csv(links_csv)) {
    const int k = net.find_link(row.at(0));
    if (k < 0) {
      fail("link " + row[0] + " is in the reference but not in the network");
      continue;
    }
    if (cut[net.links[k].from] && cut[net.links[k].to]) continue;
    const double expected = std::stod(row.at(2)), ours = user_flow(net, r.flow[k]);
    const double absolute = std::abs(ours - expected);
    const double error = std::min(absolute, absolute / std::max(std::abs(expected), 1e-300));
    ++c.links_compared;
    if (error > c.max_flow_error) c.max_flow_error = error, c.worst_link = row[0];
    if (!(error <= flow_tolerance) && !(absolute <= flow_noise_floor))
      fail("link " + row[0] + ": flow " + format(ours) + " vs EPANET " + format(expected));
  }
  return c;
}

// ---- extended-period series ------------------------------------------------------------------
namespace {

// %.10g, as the time-0 files, without printf's locale and parsing cost.
void append_number(std::string& out, double v) {
  char buffer[32];
  const auto [end, error] =
      std::to_chars(buffer, buffer + sizeof buffer, v, std::chars_format::general, 10);
  out.append(buffer, error == std::errc() ? end : buffer);
}

// EPANET's EN_DEMANDDEFICIT: what is not delivered, 0 where nothing is required.
double demand_deficit(double required, double delivered) {
  return required > 0.0 ? std::max(required - delivered, 0.0) : 0.0;
}

// required_demand,delivered_demand,deficit,deficit_pct and the end of the row.
void append_demands(std::string& out, const Network& net, double required, double delivered) {
  const double deficit = demand_deficit(required, delivered);
  append_number(out, user_flow(net, required));
  out += ',';
  append_number(out, user_flow(net, delivered));
  out += ',';
  append_number(out, user_flow(net, deficit));
  out += ',';
  append_number(out, required > 0.0 ? 100.0 * deficit / required : 0.0);
  out += '\n';
}

// Rows are built in memory a reporting time at a time and written by the atomic writer.
template <typename Row>
void write_series(const std::string& path, const char* header, const SimulationResults& s,
                  Row&& row) {
  write_file_atomically(path, [&](std::FILE* file) {
    std::fputs(header, file);
    std::string text;
    for (const Snapshot& snap : s.reports) {
      text.clear();
      row(snap, text);
      std::fwrite(text.data(), 1, text.size(), file);
    }
  });
}

}  // namespace

void write_node_series_csv(const std::string& path, const Network& net,
                           const SimulationResults& s) {
  const char* header =
      "time_s,node,head,pressure,demand,cut_off,required_demand,delivered_demand,deficit,"
      "deficit_pct,leakage\n";
  const std::vector<std::string> ids = csv_ids(net.nodes);
  write_series(path, header, s, [&](const Snapshot& snap, std::string& text) {
    std::vector<char> cut(net.nodes.size(), 0);
    for (int n : snap.cut_off) cut[n] = 1;
    const std::string time = std::to_string(snap.time) + ",";
    for (std::size_t i = 0; i < net.nodes.size(); ++i) {
      text += time;
      text += ids[i];
      text += ',';
      append_number(text, user_head(net, snap.head[i]));
      text += ',';
      append_number(text, user_pressure(net, static_cast<int>(i), snap.head[i]));
      text += ',';
      append_number(text, user_flow(net, snap.demand[i]));
      text += cut[i] ? ",1," : ",0,";
      append_demands(text, net, snap.required_demand[i], snap.delivered_demand[i]);
      text.back() = ',';  // one more column: EPANET's EN_LEAKAGEFLOW
      append_number(text, user_flow(net, snap.leakage[i]));
      text += '\n';
    }
  });
}

void write_link_series_csv(const std::string& path, const Network& net,
                           const SimulationResults& s) {
  const std::vector<std::string> ids = csv_ids(net.links);
  write_series(
      path, "time_s,link,flow,headloss,status\n", s, [&](const Snapshot& snap, std::string& text) {
        const std::string time = std::to_string(snap.time) + ",";
        for (std::size_t k = 0; k < net.links.size(); ++k) {
          const Link& l = net.links[k];
          const bool closed = is_closed(snap.status[k]);
          const double dh = snap.head[l.from] - snap.head[l.to];
          text += time;
          text += ids[k];
          text += ',';
          append_number(text, user_flow(net, snap.flow[k]));
          text += ',';
          append_number(
              text, closed ? 0.0 : user_head(net, l.type == LinkType::pump ? dh : std::abs(dh)));
          text += closed ? ",closed\n" : ",open\n";
        }
      });
}

void write_tank_series_csv(const std::string& path, const Network& net,
                           const SimulationResults& s) {
  write_series(path, "time_s,tank,level,head,volume\n", s,
               [&](const Snapshot& snap, std::string& text) {
                 for (std::size_t t = 0; t < s.tanks.size(); ++t) {
                   const Node& tank = net.nodes[s.tanks[t]];
                   const double head = snap.head[s.tanks[t]];
                   text += std::to_string(snap.time) + "," + csv_field(tank.id) + ",";
                   append_number(text, user_head(net, head - tank.elevation));
                   text += ',';
                   append_number(text, user_head(net, head));
                   text += ',';
                   append_number(text, snap.volume[t] * net.units.volume);
                   text += '\n';
                 }
               });
}

std::string find_reference_file(const std::string& dir, const std::string& name,
                                const std::string& what) {
  for (const char* suffix : {".csv", ".csv.gz"}) {
    const std::string path = dir + "/" + name + "_" + what + suffix;
    if (std::ifstream(path).good()) return path;
  }
  return "";
}

namespace {

// A CSV file, plain or gzipped (zlib reads both), line by line.
class CsvReader {
 public:
  explicit CsvReader(const std::string& path) : path_(path), file_(gzopen(path.c_str(), "rb")) {
    if (!file_) throw InputError(path, 0, "cannot open reference results");
    gzbuffer(file_, 1 << 18);
  }
  ~CsvReader() {
    if (file_) gzclose(file_);
  }
  CsvReader(const CsvReader&) = delete;
  CsvReader& operator=(const CsvReader&) = delete;

  // The next line's fields; false at the end.
  bool next(std::vector<std::string>& fields) {
    std::string line;
    char buffer[4096];
    while (gzgets(file_, buffer, sizeof buffer)) {
      line += buffer;
      if (!line.empty() && line.back() == '\n') break;
    }
    if (line.empty()) return false;
    ++line_;
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    fields.clear();
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = line.find(',', start);
      fields.push_back(line.substr(start, comma == std::string::npos ? comma : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return true;
  }
  long line() const { return line_; }
  double number(const std::string& s) const {
    double v = 0;
    const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (error != std::errc() || end != s.data() + s.size())
      throw InputError(path_, line_, "bad number '" + s + "' in reference results");
    return v;
  }

 private:
  std::string path_;
  gzFile file_;
  long line_ = 0;
};

struct Layout {
  bool series = false;  // time_s first
  std::size_t id = 0, value = 2, status = 4;
  std::size_t demand = 4;  // nodes: EPANET's demand (delivered, emitters included)
};

Layout layout_of(const std::vector<std::string>& header, const std::string& path) {
  Layout l;
  if (!header.empty() && header[0] == "time_s") {
    l.series = true;
    l.id = 1, l.value = 2, l.status = 4;
  } else if (header.size() < 3) {
    throw InputError(path, 1, "unknown reference results layout");
  }
  return l;
}

std::string at(const std::string& id, long time) {
  return id + " at " + std::to_string(time) + " s";
}

// One comparison of a run's reporting times with EPANET's node and link CSVs: each row of the
// reference at a time the run reported is compared with that snapshot; rows at other times are
// noted as missing.
class SeriesCheck {
 public:
  SeriesCheck(const Network& net, const SimulationResults& s, double head_tolerance,
              double flow_tolerance, double flow_noise_floor)
      : net_(net),
        s_(s),
        head_tolerance_(head_tolerance),
        flow_tolerance_(flow_tolerance),
        flow_noise_floor_(flow_noise_floor),
        cut_(s.reports.size(), std::vector<char>(net.nodes.size(), 0)) {
    for (std::size_t i = 0; i < s.reports.size(); ++i) snapshot_at_[s.reports[i].time] = i;
    for (std::size_t i = 0; i < s.reports.size(); ++i)
      for (int n : s.reports[i].cut_off) cut_[i][n] = 1;
  }

  void compare_nodes(const std::string& path) {
    CsvReader in(path);
    if (!in.next(f_)) throw InputError(path, 0, "empty reference results");
    const Layout l = layout_of(f_, path);
    while (in.next(f_)) {
      if (f_.size() <= l.value) throw InputError(path, in.line(), "missing fields");
      const long time = l.series ? static_cast<long>(in.number(f_[0])) : 0;
      if (const Snapshot* snap = snapshot_of(time)) compare_node(time, *snap, in, l);
    }
  }

  void compare_links(const std::string& path) {
    CsvReader in(path);
    if (!in.next(f_)) throw InputError(path, 0, "empty reference results");
    const Layout l = layout_of(f_, path);
    while (in.next(f_)) {
      if (f_.size() <= l.status) throw InputError(path, in.line(), "missing fields");
      const long time = l.series ? static_cast<long>(in.number(f_[0])) : 0;
      if (const Snapshot* snap = snapshot_of(time)) compare_link(time, *snap, in, l);
    }
  }

  SeriesComparison result() {
    c_.times_compared = static_cast<int>(compared_.size());
    c_.times_missing.assign(missing_.begin(), missing_.end());
    return c_;
  }

 private:
  const Network& net_;
  const SimulationResults& s_;
  const double head_tolerance_, flow_tolerance_, flow_noise_floor_;
  SeriesComparison c_;
  std::map<long, std::size_t> snapshot_at_;
  std::vector<std::vector<char>> cut_;  // per reporting time, per node: cut off
  std::set<long> compared_, missing_;
  std::vector<std::string> f_;  // the row being compared

  void fail(const std::string& what) {
    if (c_.failures.size() < 20) c_.failures.push_back(what);
    ++c_.failure_count;
  }

  // The snapshot of a reference row's time, or none (noted as missing).
  const Snapshot* snapshot_of(long time) {
    const auto it = snapshot_at_.find(time);
    if (it == snapshot_at_.end()) {
      missing_.insert(time);
      return nullptr;
    }
    compared_.insert(time);
    return &s_.reports[it->second];
  }

  // A node's head (a tank's also counted as its level), then a junction's demand.
  void compare_node(long time, const Snapshot& snap, const CsvReader& in, const Layout& l) {
    const std::vector<std::string>& f = f_;
    const int n = net_.find_node(f[l.id]);
    if (n < 0) {
      fail("node " + f[l.id] + " is in the reference but not in the network");
      return;
    }
    if (cut_[snapshot_at_[time]][n]) {
      ++c_.cut_off_skipped;
      return;
    }
    const double expected = in.number(f[l.value]), ours = user_head(net_, snap.head[n]);
    const double error = std::abs(ours - expected);
    ++c_.values_compared;
    const bool tank = net_.nodes[n].type == NodeType::tank;
    if (error > c_.max_head_error) c_.max_head_error = error, c_.worst_head = at(f[l.id], time);
    if (tank && error > c_.max_level_error)
      c_.max_level_error = error, c_.worst_level = at(f[l.id], time);
    if (!(error <= head_tolerance_))
      fail((tank ? "tank " : "node ") + at(f[l.id], time) + ": head " + format(ours) +
           " vs EPANET " + format(expected));
    if (net_.is_junction(n) && f.size() > l.demand) compare_demand(n, time, snap, in, l);
  }

  // A junction's demand (delivered, emitters included) as a flow: within flow_tolerance
  // (absolute or relative) or the noise floor.
  void compare_demand(int n, long time, const Snapshot& snap, const CsvReader& in,
                      const Layout& l) {
    const std::vector<std::string>& f = f_;
    const double expected = in.number(f[l.demand]), ours = user_flow(net_, snap.demand[n]);
    const double absolute = std::abs(ours - expected);
    const double error = std::min(absolute, absolute / std::max(std::abs(expected), 1e-300));
    ++c_.values_compared;
    if (error > c_.max_demand_error)
      c_.max_demand_error = error, c_.worst_demand = at(f[l.id], time);
    if (!(error <= flow_tolerance_) && !(absolute <= flow_noise_floor_))
      fail("node " + at(f[l.id], time) + ": demand " + format(ours) + " vs EPANET " +
           format(expected));
  }

  // A link's flow and whether it is closed; links with both ends cut off are skipped.
  void compare_link(long time, const Snapshot& snap, const CsvReader& in, const Layout& l) {
    const std::vector<std::string>& f = f_;
    const int k = net_.find_link(f[l.id]);
    if (k < 0) {
      fail("link " + f[l.id] + " is in the reference but not in the network");
      return;
    }
    const std::vector<char>& cut_now = cut_[snapshot_at_[time]];
    if (cut_now[net_.links[k].from] && cut_now[net_.links[k].to]) return;
    const double expected = in.number(f[l.value]), ours = user_flow(net_, snap.flow[k]);
    const double absolute = std::abs(ours - expected);
    const double error = std::min(absolute, absolute / std::max(std::abs(expected), 1e-300));
    ++c_.values_compared;
    if (error > c_.max_flow_error) c_.max_flow_error = error, c_.worst_flow = at(f[l.id], time);
    if (!(error <= flow_tolerance_) && !(absolute <= flow_noise_floor_))
      fail("link " + at(f[l.id], time) + ": flow " + format(ours) + " vs EPANET " +
           format(expected));
    const bool closed = is_closed(snap.status[k]);
    if (closed != (f[l.status] == "closed")) {
      ++c_.status_mismatches;
      fail("link " + at(f[l.id], time) + ": " + (closed ? "closed" : "open") + " vs EPANET " +
           f[l.status]);
    }
  }
};

}  // namespace

SeriesComparison compare_series_with_reference(const Network& net, const SimulationResults& s,
                                               const std::string& nodes_csv,
                                               const std::string& links_csv, double head_tolerance,
                                               double flow_tolerance, double flow_noise_floor) {
  SeriesCheck comparison(net, s, head_tolerance, flow_tolerance, flow_noise_floor);
  comparison.compare_nodes(nodes_csv);
  comparison.compare_links(links_csv);
  return comparison.result();
}

}  // namespace cgs::net
