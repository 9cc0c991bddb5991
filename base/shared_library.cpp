#include "base/shared_library.hpp"

#include <dlfcn.h>

#include <stdexcept>

namespace cgs {

SharedLibrary::SharedLibrary(const std::vector<std::string>& candidates, const std::string& what)
    : what_(what) {
  std::string reasons;
  for (const std::string& candidate : candidates) {
    if (candidate.empty()) continue;
    // RTLD_LOCAL: the library's symbols serve only lookups through this handle, so they cannot
    // interpose on anything the program already has.
    handle_ = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_) {
      path_ = candidate;
      return;
    }
    const char* reason = dlerror();
    reasons += "\n  " + candidate + ": " + (reason ? reason : "cannot be opened");
  }
  throw std::runtime_error(what +
                           " is needed for this run but its shared library could not be "
                           "loaded:" +
                           reasons);
}

void* SharedLibrary::symbol(const char* name) const {
  dlerror();  // clear a stale error: a symbol's address may legitimately be null
  void* address = dlsym(handle_, name);
  if (const char* reason = dlerror())
    throw std::runtime_error(what_ + " (" + path_ + ") has no " + name + ": " + reason +
                             " (another version than the one this program was built with?)");
  return address;
}

}  // namespace cgs
