#include "base/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>

#include "base/input_error.hpp"

namespace cgs {

namespace {

std::mutex inputs_mutex;
std::vector<std::string>& inputs() {
  static std::vector<std::string> paths;
  return paths;
}

// Whether two paths name the same existing file (symlinks and hard links included).
bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  return std::filesystem::equivalent(a, b, error) && !error;
}

}  // namespace

void protect_input(const std::string& path) {
  std::lock_guard<std::mutex> lock(inputs_mutex);
  inputs().push_back(path);
}

void check_not_an_input(const std::string& path, const std::string& option) {
  std::lock_guard<std::mutex> lock(inputs_mutex);
  for (const std::string& input : inputs()) {
    if (same_file(path, input))
      throw InputError((option.empty() ? "" : option + ": ") + path + " is the input file " +
                       input + "; refusing to overwrite it");
  }
}

// Whether a file can be created in `folder`: one is created there (exclusively, under a name no
// output takes) and removed, so that permissions, read-only mounts and /proc all answer as the
// write will. errno says why not.
bool can_create_in(const std::filesystem::path& folder) {
  const std::string probe =
      (folder / (".cgsolve-probe-" + std::to_string(::getpid()))).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return errno == EEXIST;  // a probe of this process already there: creatable
  ::close(fd);
  ::unlink(probe.c_str());
  return true;
}

void check_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, fs::path>> seen;  // option, the path made absolute
  for (const auto& output : outputs) {
    // Plain references, not structured bindings: clang 14 cannot capture those in `refuse`.
    const std::string& option = output.first;
    const std::string& path = output.second;
    if (path.empty()) continue;
    check_not_an_input(path, option);
    std::error_code error;
    const fs::path absolute = fs::weakly_canonical(fs::absolute(path, error), error);
    const fs::path folder = absolute.parent_path();
    auto refuse = [&](const std::string& why) {
      throw InputError(path, 0, option + ": cannot create file: " + why);
    };
    if (!fs::exists(folder, error)) refuse("the folder " + folder.string() + " does not exist");
    if (!fs::is_directory(folder, error)) refuse(std::strerror(ENOTDIR));
    if (!can_create_in(folder)) refuse(std::strerror(errno));
    for (const auto& [other, earlier] : seen)
      if (earlier == absolute)
        throw InputError(option + " and " + other + " name one file, " + path +
                         ": each output needs its own");
    seen.emplace_back(option, absolute);
  }
}

void ignore_file_size_signal() {
  static const bool ignored = std::signal(SIGXFSZ, SIG_IGN) != SIG_ERR;
  (void)ignored;
}

AtomicOutput::AtomicOutput(std::string path) : path_(std::move(path)) {
  check_not_an_input(path_);
  ignore_file_size_signal();
  temporary_ = path_ + ".tmp." + std::to_string(::getpid());
  file_ = std::fopen(temporary_.c_str(), "wb");
  if (!file_)
    throw InputError(path_, 0, std::string("cannot create file: ") + std::strerror(errno));
}

AtomicOutput::~AtomicOutput() {
  if (!file_) return;
  std::fclose(file_);
  std::remove(temporary_.c_str());
}

void AtomicOutput::commit() {
  std::FILE* file = file_;
  file_ = nullptr;  // from here on the temporary file is this function's to remove
  // errno of the failed write, read before fclose can change it (EFBIG: a full disk or ulimit -f).
  const int write_error = std::ferror(file) ? (errno != 0 ? errno : EIO) : 0;
  const int close_error = std::fclose(file) == 0 ? 0 : errno;
  if (write_error != 0 || close_error != 0) {
    std::remove(temporary_.c_str());
    throw InputError(path_, 0,
                     std::string("cannot write file: ") +
                         std::strerror(write_error != 0 ? write_error : close_error));
  }
  if (std::rename(temporary_.c_str(), path_.c_str()) != 0) {
    const int error = errno;
    std::remove(temporary_.c_str());
    throw InputError(
        path_, 0,
        std::string("cannot rename the finished file into place: ") + std::strerror(error));
  }
}

void write_file_atomically(const std::string& path, const std::function<void(std::FILE*)>& write) {
  AtomicOutput file(path);
  write(file.get());
  file.commit();
}

void write_file_atomically(const std::string& path, const std::string& content) {
  write_file_atomically(path, [&](std::FILE* file) {
    if (!content.empty()) std::fwrite(content.data(), 1, content.size(), file);
  });
}

}  // namespace cgs
