// Output files are written whole or not at all: into a temporary file beside the target, then
// renamed over it. A failure (or an exception from `write`) removes the temporary file.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace cgs {

// Outputs never destroy inputs: a program registers every file it reads (protect_input), and
// every output (these writers, and refuse_output_over_inputs() before anything runs) is refused
// with InputError when it names one of them: the same file also through a symlink, a hard link
// or another spelling of the path.
void protect_input(const std::string& path);
// Throws InputError ("--output: <path> is the input file <input>; refusing to overwrite it")
// when `path` is a registered input. `option` names the option in the message.
void check_not_an_input(const std::string& path, const std::string& option = "");

// The outputs a run will write, checked before it starts (so that a wrong path is not found
// after the whole run): (option, path) pairs, empty paths skipped. Throws InputError naming the
// option when a path is an input (check_not_an_input), when its folder does not exist or cannot
// be written, or when two options name one file.
void check_outputs(const std::vector<std::pair<std::string, std::string>>& outputs);

// Past a file-size limit (`ulimit -f`, a quota) the kernel sends SIGXFSZ, whose default action
// kills the process mid-write and leaves the temporary file behind. The writers ignore it (once,
// process-wide), so that the write fails with EFBIG instead and the temporary file is removed.
void ignore_file_size_signal();

// An output written piece by piece (netsolve's .out, along the run) into a temporary file beside
// `path`, renamed over it by commit(). Destroyed without commit() (an error, an exception), it
// removes the temporary file: nothing is left. Throws InputError naming `path` when the file
// cannot be created, written or renamed.
class AtomicOutput {
 public:
  explicit AtomicOutput(std::string path);
  ~AtomicOutput();
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;
  std::FILE* get() const { return file_; }
  void commit();

 private:
  std::string path_, temporary_;
  std::FILE* file_ = nullptr;
};

// Calls write(file) on a temporary file and renames it to `path`. Throws InputError naming
// `path` when it cannot be created, written or renamed.
void write_file_atomically(const std::string& path, const std::function<void(std::FILE*)>& write);

// The same for text already in memory.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace cgs
