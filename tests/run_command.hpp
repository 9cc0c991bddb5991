// Running a program of this project as a process in a test: a shell command, its stdout and
// stderr together, and its exit code (-1 when it did not exit normally, e.g. a signal).
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace cgs::testing {

struct Run {
  int exit_code;
  std::string output;  // stdout and stderr together
};

inline Run run_command(const std::string& command) {
  std::FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

}  // namespace cgs::testing
