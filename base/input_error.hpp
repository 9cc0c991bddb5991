// The one error every room throws for bad input (a file, a value, an option): the programs report
// it and exit 2. `file` and `line` are empty/0 when the problem has no place in a file.
#pragma once

#include <stdexcept>
#include <string>

namespace cgs {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, long line, const std::string& message);
  explicit InputError(const std::string& message) : InputError("", 0, message) {}
  const std::string& file() const { return file_; }
  long line() const { return line_; }

 private:
  std::string file_;
  long line_;
};

}  // namespace cgs
