// Faults injected into cgsolve and netsolve run as processes: a full disk (`ulimit -f`), a folder
// that cannot be written, a SIGKILL in the middle of writing a large series, a truncated .gz, NaN
// and Inf in a matrix, a network that is disconnected or has a pump without a curve. Each must
// give a clear error naming the file (or element), a non-zero exit, no output file, and leave the
// inputs byte for byte and mtime as they were. Outputs go to a temporary file renamed into place
// (base/atomic_file.hpp); only a SIGKILL, which nothing can catch, leaves that temporary file.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "run_command.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kBin = CGSOLVE_BINARY_DIR "/app/";
const std::string kData = CGSOLVE_SOURCE_DIR "/data";

using cgs::testing::Run;
using cgs::testing::run_command;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// An input as it was: its bytes and its modification time.
struct Fingerprint {
  std::string bytes;
  fs::file_time_type mtime;
  explicit Fingerprint(const fs::path& path)
      : bytes(read_bytes(path)), mtime(fs::last_write_time(path)) {}
  bool operator==(const Fingerprint& other) const {
    return bytes == other.bytes && mtime == other.mtime;
  }
};

// A folder of its own per test, holding copies of the inputs.
struct Scratch {
  fs::path dir;
  explicit Scratch(const std::string& name)
      : dir(fs::temp_directory_path() /
            ("cgsolve-faults-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
  fs::path copy(const std::string& source) const {
    const fs::path target = dir / fs::path(source).filename();
    fs::copy_file(source, target);
    return target;
  }
  fs::path write(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir / name, std::ios::binary) << bytes;
    return dir / name;
  }
  // The names in the folder, sorted: what a failed run must not have added to.
  std::vector<std::string> names() const {
    std::vector<std::string> list;
    for (const auto& entry : fs::directory_iterator(dir))
      list.push_back(entry.path().filename().string());
    std::sort(list.begin(), list.end());
    return list;
  }
};

// A run that must fail cleanly: exit 2 with the message, nothing new in the folder, the inputs
// as they were.
void check_refused(const Run& r, const Scratch& s, const std::vector<std::string>& names_before,
                   const std::vector<std::pair<fs::path, Fingerprint>>& inputs,
                   const std::vector<std::string>& message_parts) {
  INFO(r.output);
  CHECK(r.exit_code == 2);
  for (const std::string& part : message_parts) CHECK(contains(r.output, part));
  CHECK(s.names() == names_before);
  // Plain variables, not structured bindings: clang 14 cannot capture those in CAPTURE's lambda.
  for (const auto& input : inputs) {
    const std::string path = input.first.string();
    CAPTURE(path);
    CHECK(Fingerprint(input.first) == input.second);
  }
}

}  // namespace

TEST_CASE("faults: a full disk (ulimit -f) fails the write with EFBIG: exit 2, no file") {
  const Scratch s("full-disk");
  const fs::path matrix = s.copy(kData + "/matrices/494_bus.mtx");
  const fs::path network = s.copy(kData + "/networks/Net1.inp");
  const std::vector<std::pair<fs::path, Fingerprint>> inputs = {
      {matrix, Fingerprint(matrix)}, {network, Fingerprint(network)}};
  const std::vector<std::string> before = s.names();
  // 1 KiB (one block of bash's ulimit; dash counts 512-byte blocks, so bash is named): every
  // output here is larger. Without the writers ignoring SIGXFSZ the kernel killed the process
  // mid-write, leaving x.mtx.tmp.<pid>. Not less than 1 KiB: LLVM's OpenMP runtime (clang
  // builds, e.g. the sanitizer build) writes a 1 KiB registration file in /dev/shm when it
  // starts, and dies of SIGXFSZ under a smaller limit before any of our code runs.
  const auto limited = [](const std::string& command) {
    return "bash -c 'ulimit -f 1 && " + command + "'";
  };
  const std::string cgsolve = kBin + "cgsolve --quiet --matrix " + matrix.string();
  for (const std::string& output : {"--output", "--report", "--history"}) {
    CAPTURE(output);
    const fs::path out = s.dir / "out.txt";
    check_refused(run_command(limited(cgsolve + " " + output + " " + out.string())), s, before,
                  inputs, {out.string(), "cannot write file: File too large"});
  }
  const std::string netsolve = kBin + "netsolve --quiet --network " + network.string();
  for (const std::string& output : {"--nodes", "--links", "--report"}) {
    CAPTURE(output);
    const fs::path out = s.dir / "out.csv";
    check_refused(run_command(limited(netsolve + " " + output + " " + out.string())), s, before,
                  inputs, {out.string(), "cannot write file: File too large"});
  }
}

TEST_CASE("faults: an output folder that cannot be written: exit 2 naming the path, no file") {
  const Scratch s("read-only");
  const fs::path matrix = s.copy(kData + "/matrices/494_bus.mtx");
  const fs::path network = s.copy(kData + "/networks/Net1.inp");
  const std::vector<std::pair<fs::path, Fingerprint>> inputs = {
      {matrix, Fingerprint(matrix)}, {network, Fingerprint(network)}};
  // Root writes into a folder whatever its mode says, so the folders that refuse everyone are:
  // one whose "folder" is a regular file (ENOTDIR), and /proc (no new files there).
  std::vector<std::pair<fs::path, std::string>> outputs = {
      {matrix / "x.out", "Not a directory"},
      {fs::path("/proc") / ("cgsolve-faults-" + std::to_string(::getpid())), ""}};
  const fs::path locked = s.dir / "locked";
  if (::geteuid() != 0) {  // as anyone else, a folder without write permission too
    fs::create_directory(locked);
    fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
    outputs.emplace_back(locked / "x.out", "Permission denied");
  } else {
    MESSAGE("running as root: a read-only mode does not stop root; tested with a path under a "
            "regular file and in /proc instead");
  }
  const std::vector<std::string> with_locked = s.names();
  for (const auto& out_reason : outputs) {
    const fs::path& out = out_reason.first;
    const std::string path = out.string();
    CAPTURE(path);
    const std::vector<std::string> message = {path, "cannot create file", out_reason.second};
    for (const std::string& option : {"--output", "--report", "--history"})
      check_refused(run_command(kBin + "cgsolve --quiet --matrix " + matrix.string() + " " +
                                option + " " + out.string()),
                    s, with_locked, inputs, message);
    for (const std::string& option : {"--nodes", "--links", "--report"})
      check_refused(run_command(kBin + "netsolve --quiet --network " + network.string() + " " +
                                option + " " + out.string()),
                    s, with_locked, inputs, message);
    CHECK_FALSE(fs::exists(out));
  }
  if (fs::exists(locked)) fs::permissions(locked, fs::perms::owner_all);
}

namespace {

// netsolve started as a child process (stdout and stderr to /dev/null); its pid.
pid_t start_netsolve(const std::vector<std::string>& arguments) {
  std::vector<std::string> words{kBin + "netsolve"};
  words.insert(words.end(), arguments.begin(), arguments.end());
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (!std::freopen("/dev/null", "w", stdout) || !std::freopen("/dev/null", "w", stderr))
      ::_exit(126);
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

}  // namespace

TEST_CASE("faults: SIGKILL while netsolve writes a large --nodes series leaves it absent or whole") {
  const Scratch s("sigkill");
  const fs::path network = s.copy(kData + "/networks/Net3.inp");
  const Fingerprint network_before(network);
  // Net3 over 60 days: 1,441 reporting times of 97 nodes, a ~7 MB series.
  const std::vector<std::string> base = {"--quiet", "--network", network.string(), "--duration",
                                         "1440h"};
  const fs::path whole = s.dir / "whole.csv";
  {
    std::vector<std::string> arguments = base;
    arguments.insert(arguments.end(), {"--nodes", whole.string()});
    int status = 0;
    REQUIRE(::waitpid(start_netsolve(arguments), &status, 0) > 0);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
  }
  const std::string expected = read_bytes(whole);
  REQUIRE(expected.size() > 1'000'000);

  // Killed as soon as its temporary file appears, that is in the middle of writing the series.
  int killed_mid_write = 0;
  for (int attempt = 0; attempt < 5 && killed_mid_write == 0; ++attempt) {
    CAPTURE(attempt);
    const fs::path out = s.dir / "nodes.csv";
    std::vector<std::string> arguments = base;
    arguments.insert(arguments.end(), {"--nodes", out.string()});
    const pid_t pid = start_netsolve(arguments);
    const fs::path temporary = out.string() + ".tmp." + std::to_string(pid);
    int status = 0;
    bool exited = false;
    while (!fs::exists(temporary)) {
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        break;
      }
    }
    if (!exited) {
      ::kill(pid, SIGKILL);
      REQUIRE(::waitpid(pid, &status, 0) == pid);
      killed_mid_write += WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    }
    // Absent, or whole when the rename came first: never a part of it under its name.
    if (fs::exists(out)) CHECK(read_bytes(out) == expected);
    fs::remove(out);
    fs::remove(temporary);  // what a SIGKILL leaves: partial, but never under the output's name
  }
  CHECK(killed_mid_write >= 1);
  CHECK(Fingerprint(network) == network_before);
}

TEST_CASE("faults: a truncated .gz matrix is refused naming the file, nothing written") {
  const Scratch s("truncated-gz");
  const std::string gz = read_bytes(kData + "/matrices/lap2D_5pt_n100.mtx.gz");
  REQUIRE(gz.size() > 1000);
  // Cut in the middle of the deflate stream, and just before the gzip trailer (CRC and size).
  for (const std::size_t keep : {gz.size() / 2, gz.size() - 4}) {
    CAPTURE(keep);
    const fs::path matrix = s.write("A" + std::to_string(keep) + ".mtx.gz", gz.substr(0, keep));
    const std::vector<std::pair<fs::path, Fingerprint>> inputs = {{matrix, Fingerprint(matrix)}};
    const std::vector<std::string> before = s.names();
    const fs::path out = s.dir / "x.mtx";
    check_refused(run_command(kBin + "cgsolve --quiet --matrix " + matrix.string() +
                              " --output " + out.string() + " --report " +
                              (s.dir / "r.json").string()),
                  s, before, inputs, {matrix.string(), "truncated"});
  }
}

TEST_CASE("faults: NaN or Inf in a matrix or right-hand side is refused with file and line") {
  const Scratch s("non-finite");
  const std::string head = "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n";
  const std::pair<std::string, std::string> cases[] = {
      {"nan", "NaN or Inf value 'nan' is not allowed"},
      {"NaN", "NaN or Inf value 'NaN' is not allowed"},
      {"-inf", "NaN or Inf value '-inf' is not allowed"},
      {"inf", "NaN or Inf value 'inf' is not allowed"},
      {"1e999", "value '1e999' is beyond the double range"}};
  for (const auto& value_message : cases) {
    const std::string& value = value_message.first;
    CAPTURE(value);
    const fs::path matrix =
        s.write("A.mtx", head + "1 1 4\n2 1 -1\n2 2 " + value + "\n3 3 4\n");
    const std::vector<std::pair<fs::path, Fingerprint>> inputs = {{matrix, Fingerprint(matrix)}};
    const std::vector<std::string> before = s.names();
    check_refused(run_command(kBin + "cgsolve --quiet --matrix " + matrix.string() +
                              " --output " + (s.dir / "x.mtx").string()),
                  s, before, inputs, {matrix.string() + ":5:", value_message.second});
    fs::remove(matrix);
  }
  // The right-hand side the same way.
  const fs::path matrix = s.write("A.mtx", head + "1 1 4\n2 1 -1\n2 2 4\n3 3 4\n");
  const fs::path rhs =
      s.write("b.mtx", "%%MatrixMarket matrix array real general\n3 1\n1\ninf\n1\n");
  const std::vector<std::pair<fs::path, Fingerprint>> inputs = {{matrix, Fingerprint(matrix)},
                                                                {rhs, Fingerprint(rhs)}};
  check_refused(run_command(kBin + "cgsolve --quiet --matrix " + matrix.string() + " --rhs " +
                            rhs.string() + " --output " + (s.dir / "x.mtx").string()),
                s, s.names(), inputs, {rhs.string() + ":4:", "NaN or Inf value"});
}

TEST_CASE("faults: a disconnected network, a pump without a curve: exit 2 naming the element") {
  const Scratch s("network");
  const std::string source =
      "[RESERVOIRS]\nR 100\n[JUNCTIONS]\nJ 10 5\nK 10 5\nL 10 5\n[PIPES]\nP1 R J 1000 12 100\n";
  const std::string pumped = source + "P2 J K 10 12 100\nP3 J L 10 12 100\n[PUMPS]\n";
  struct Case {
    std::string name, text;
    std::vector<std::string> message;
  };
  const Case cases[] = {
      // K and L joined to each other only: their heads are undetermined.
      {"disconnected.inp", source + "P2 K L 1000 12 100\n",
       {"disconnected.inp", "not connected to any reservoir or tank", "K, L"}},
      {"no-curve.inp", pumped + "PU R L SPEED 1.2\n",
       {"no-curve.inp:12:", "pump 'PU' has neither a HEAD curve nor POWER (EPANET error 226)"}},
      {"bare-pump.inp", pumped + "PU R L\n",
       {"bare-pump.inp:12:", "missing fields: expected ID, nodes and HEAD curve or POWER"}},
      {"unknown-curve.inp", pumped + "PU R L HEAD C9\n",
       {"unknown-curve.inp:12:", "unknown curve 'C9'"}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const fs::path network = s.write(c.name, c.text);
    const std::vector<std::pair<fs::path, Fingerprint>> inputs = {
        {network, Fingerprint(network)}};
    const std::vector<std::string> before = s.names();
    check_refused(run_command(kBin + "netsolve --quiet --network " + network.string() +
                              " --nodes " + (s.dir / "n.csv").string() + " --report " +
                              (s.dir / "r.json").string()),
                  s, before, inputs, c.message);
  }
}
