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

}  // namespace

void write_nodes_csv(const std::string& path, const Network& net, const HydraulicResults& r) {
  std::ostringstream out;
  out << "node,type,head,pressure,demand\n";
  for (std::size_t i = 0; i < net.nodes.size(); ++i) {
    const int n = static_cast<int>(i);
    out << net.nodes[i].id << ',' << to_string(net.nodes[i].type) << ','
        << format(user_head(net, r.head[i])) << ',' << format(user_pressure(net, n, r.head[i]))
        << ',' << format(user_flow(net, r.demand[i])) << '\n';
  }
  write_file_atomically(path, out.str());  // whole or not at all
}

void write_links_csv(const std::string& path, const Network& net, const HydraulicResults& r) {
  std::ostringstream out;
  out << "link,type,flow,headloss,status\n";
  for (std::size_t k = 0; k < net.links.size(); ++k) {
    out << net.links[k].id << ',' << to_string(net.links[k].type) << ','
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
      "deficit_pct\n";
  write_series(path, header, s,
               [&](const Snapshot& snap, std::string& text) {
                 std::vector<char> cut(net.nodes.size(), 0);
                 for (int n : snap.cut_off) cut[n] = 1;
                 const std::string time = std::to_string(snap.time) + ",";
                 for (std::size_t i = 0; i < net.nodes.size(); ++i) {
                   text += time;
                   text += net.nodes[i].id;
                   text += ',';
                   append_number(text, user_head(net, snap.head[i]));
                   text += ',';
                   append_number(text, user_pressure(net, static_cast<int>(i), snap.head[i]));
                   text += ',';
                   append_number(text, user_flow(net, snap.demand[i]));
                   text += cut[i] ? ",1," : ",0,";
                   append_demands(text, net, snap.required_demand[i], snap.delivered_demand[i]);
                 }
               });
}

void write_link_series_csv(const std::string& path, const Network& net,
                           const SimulationResults& s) {
  write_series(
      path, "time_s,link,flow,headloss,status\n", s, [&](const Snapshot& snap, std::string& text) {
        const std::string time = std::to_string(snap.time) + ",";
        for (std::size_t k = 0; k < net.links.size(); ++k) {
          const Link& l = net.links[k];
          const bool closed = is_closed(snap.status[k]);
          const double dh = snap.head[l.from] - snap.head[l.to];
          text += time;
          text += l.id;
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
                   text += std::to_string(snap.time) + "," + tank.id + ",";
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

}  // namespace

SeriesComparison compare_series_with_reference(const Network& net, const SimulationResults& s,
                                               const std::string& nodes_csv,
                                               const std::string& links_csv, double head_tolerance,
                                               double flow_tolerance, double flow_noise_floor) {
  SeriesComparison c;
  std::map<long, std::size_t> snapshot_at;
  for (std::size_t i = 0; i < s.reports.size(); ++i) snapshot_at[s.reports[i].time] = i;
  std::vector<std::vector<char>> cut(s.reports.size(), std::vector<char>(net.nodes.size(), 0));
  for (std::size_t i = 0; i < s.reports.size(); ++i)
    for (int n : s.reports[i].cut_off) cut[i][n] = 1;
  std::set<long> compared, missing;
  auto fail = [&](const std::string& what) {
    if (c.failures.size() < 20) c.failures.push_back(what);
    ++c.failure_count;
  };
  // The snapshot of a reference row's time, or none (noted as missing).
  auto snapshot_of = [&](long time) -> const Snapshot* {
    const auto it = snapshot_at.find(time);
    if (it == snapshot_at.end()) {
      missing.insert(time);
      return nullptr;
    }
    compared.insert(time);
    return &s.reports[it->second];
  };
  // A junction's demand (delivered, emitters included) as a flow: within flow_tolerance
  // (absolute or relative) or the noise floor.
  auto compare_demand = [&](int n, long time, const Snapshot& snap, const CsvReader& in,
                            const std::vector<std::string>& f, const Layout& l) {
    const double expected = in.number(f[l.demand]), ours = user_flow(net, snap.demand[n]);
    const double absolute = std::abs(ours - expected);
    const double error = std::min(absolute, absolute / std::max(std::abs(expected), 1e-300));
    ++c.values_compared;
    if (error > c.max_demand_error) c.max_demand_error = error, c.worst_demand = at(f[l.id], time);
    if (!(error <= flow_tolerance) && !(absolute <= flow_noise_floor))
      fail("node " + at(f[l.id], time) + ": demand " + format(ours) + " vs EPANET " +
           format(expected));
  };
  std::vector<std::string> f;
  {
    CsvReader in(nodes_csv);
    if (!in.next(f)) throw InputError(nodes_csv, 0, "empty reference results");
    const Layout l = layout_of(f, nodes_csv);
    while (in.next(f)) {
      if (f.size() <= l.value) throw InputError(nodes_csv, in.line(), "missing fields");
      const long time = l.series ? static_cast<long>(in.number(f[0])) : 0;
      const Snapshot* snap = snapshot_of(time);
      if (!snap) continue;
      const int n = net.find_node(f[l.id]);
      if (n < 0) {
        fail("node " + f[l.id] + " is in the reference but not in the network");
        continue;
      }
      if (cut[snapshot_at[time]][n]) {
        ++c.cut_off_skipped;
        continue;
      }
      const double expected = in.number(f[l.value]), ours = user_head(net, snap->head[n]);
      const double error = std::abs(ours - expected);
      ++c.values_compared;
      const bool tank = net.nodes[n].type == NodeType::tank;
      if (error > c.max_head_error) c.max_head_error = error, c.worst_head = at(f[l.id], time);
      if (tank && error > c.max_level_error)
        c.max_level_error = error, c.worst_level = at(f[l.id], time);
      if (!(error <= head_tolerance))
        fail((tank ? "tank " : "node ") + at(f[l.id], time) + ": head " + format(ours) +
             " vs EPANET " + format(expected));
      if (net.is_junction(n) && f.size() > l.demand) compare_demand(n, time, *snap, in, f, l);
    }
  }
  {
    CsvReader in(links_csv);
    if (!in.next(f)) throw InputError(links_csv, 0, "empty reference results");
    const Layout l = layout_of(f, links_csv);
    while (in.next(f)) {
      if (f.size() <= l.status) throw InputError(links_csv, in.line(), "missing fields");
      const long time = l.series ? static_cast<long>(in.number(f[0])) : 0;
      const Snapshot* snap = snapshot_of(time);
      if (!snap) continue;
      const int k = net.find_link(f[l.id]);
      if (k < 0) {
        fail("link " + f[l.id] + " is in the reference but not in the network");
        continue;
      }
      const std::vector<char>& cut_now = cut[snapshot_at[time]];
      if (cut_now[net.links[k].from] && cut_now[net.links[k].to]) continue;
      const double expected = in.number(f[l.value]), ours = user_flow(net, snap->flow[k]);
      const double absolute = std::abs(ours - expected);
      const double error = std::min(absolute, absolute / std::max(std::abs(expected), 1e-300));
      ++c.values_compared;
      if (error > c.max_flow_error) c.max_flow_error = error, c.worst_flow = at(f[l.id], time);
      if (!(error <= flow_tolerance) && !(absolute <= flow_noise_floor))
        fail("link " + at(f[l.id], time) + ": flow " + format(ours) + " vs EPANET " +
             format(expected));
      const bool closed = is_closed(snap->status[k]);
      if (closed != (f[l.status] == "closed")) {
        ++c.status_mismatches;
        fail("link " + at(f[l.id], time) + ": " + (closed ? "closed" : "open") + " vs EPANET " +
             f[l.status]);
      }
    }
  }
  c.times_compared = static_cast<int>(compared.size());
  c.times_missing.assign(missing.begin(), missing.end());
  return c;
}

}  // namespace cgs::net
