//===- CodegenLoader.cpp - the compiler, linked in or loaded --------------===//

#include "lowbit/Jit/Codegen.h"

#include "lowbit/error.h"

#include <filesystem>
#include <mutex>

#include <dlfcn.h>

// Defined where LowBitCodegen is linked in (its link option keeps it), else
// null: then the module is loaded.
extern "C" __attribute__((weak)) lowbit::jit::Codegen *lowbit_codegen_create();

namespace lowbit::jit {

namespace {

constexpr const char *kModuleName = "liblowbit-codegen.so";

struct Loaded {
  void *handle = nullptr;
  Codegen *codegen = nullptr;
};

Loaded load() {
  Loaded loaded;
  if (lowbit_codegen_create) {
    loaded.codegen = lowbit_codegen_create();
    return loaded;
  }
  const std::string &path = codegenFile();
  if (path.empty())
    throw Error(std::string("cannot find the compiler (") + kModuleName +
                " beside the executable)");
  loaded.handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!loaded.handle) {
    const char *why = ::dlerror();
    throw Error("cannot load the compiler " + path + ": " +
                (why ? why : "unknown error"));
  }
  auto create = reinterpret_cast<Codegen *(*)()>(
      ::dlsym(loaded.handle, "lowbit_codegen_create"));
  if (!create)
    throw Error("cannot load the compiler " + path +
                ": no lowbit_codegen_create");
  loaded.codegen = create();
  return loaded;
}

/// Loaded once; a failure is thrown again to every later caller.
const Loaded &loadedCodegen() {
  static std::once_flag once;
  static Loaded loaded;
  static std::string failure;
  std::call_once(once, [] {
    try {
      loaded = load();
    } catch (const Error &e) {
      failure = e.what();
    }
  });
  if (!loaded.codegen)
    throw Error(failure);
  return loaded;
}

} // namespace

const std::string &codegenFile() {
  static const std::string file = []() -> std::string {
    std::error_code ec;
    const std::filesystem::path exe =
        std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec)
      return "";
    if (lowbit_codegen_create)
      return exe.string();
    const std::filesystem::path module = exe.parent_path() / kModuleName;
    return std::filesystem::exists(module, ec) ? module.string() : "";
  }();
  return file;
}

const Codegen &codegen() { return *loadedCodegen().codegen; }

void *codegenSymbol(const char *symbol) {
  const Loaded &loaded = loadedCodegen();
  return loaded.handle ? ::dlsym(loaded.handle, symbol) : nullptr;
}

} // namespace lowbit::jit
