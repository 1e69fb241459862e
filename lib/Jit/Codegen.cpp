//===- Codegen.cpp - the compiler behind Codegen.h ------------------------===//
//
// LowBitCodegen: Codegen.h's interface over lib/Pipeline, lib/Tuning's
// schedule files and lib/Target. Linked into liblowbit-codegen.so (which
// the lowbit executable loads) or into a program directly.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Jit/Codegen.h"

#include "lowbit/Pipeline/Pipeline.h"
#include "lowbit/Target/TargetInfo.h"
#include "lowbit/Tuning/Schedule.h"
#include "lowbit/error.h"

#include "llvm/Support/Error.h"

namespace {

using namespace lowbit::jit;

class PipelineCodegen final : public Codegen {
public:
  mlir::lowbit::KernelSource
  generateKernel(const mlir::lowbit::KernelRequest &request) const override {
    llvm::Expected<mlir::lowbit::KernelSource> source =
        mlir::lowbit::generateKernel(request);
    if (!source)
      throw lowbit::Error(llvm::toString(source.takeError()));
    return std::move(*source);
  }

  std::shared_ptr<const mlir::lowbit::Schedule>
  loadSchedule(const std::string &path) const override {
    auto schedule = mlir::lowbit::Schedule::load(path);
    if (!schedule)
      throw lowbit::Error(llvm::toString(schedule.takeError()));
    return std::make_shared<const mlir::lowbit::Schedule>(
        std::move(*schedule));
  }

  std::optional<ScheduledConfig>
  lookup(const mlir::lowbit::Schedule &schedule, const std::string &format,
         int64_t M, int64_t K, const std::string &nClass,
         const std::string &target, int64_t threads) const override {
    const mlir::lowbit::ScheduleEntry *entry =
        schedule.lookup({format, M, K, nClass, target, threads});
    if (!entry)
      return std::nullopt;
    return ScheduledConfig{entry->config, entry->us};
  }

  std::string
  scheduleText(const mlir::lowbit::Schedule &schedule) const override {
    return schedule.str();
  }

  bool isTarget(const std::string &target) const override {
    return mlir::lowbit::createTargetInfo(target) != nullptr;
  }

  std::string fallbackTarget(const std::string &target) const override {
    std::unique_ptr<mlir::lowbit::TargetInfo> info =
        mlir::lowbit::createTargetInfo(target);
    return info ? info->getFallbackTarget().str() : "generic";
  }

  bool hasByteTableLookup(const std::string &target) const override {
    std::unique_ptr<mlir::lowbit::TargetInfo> info =
        mlir::lowbit::createTargetInfo(target);
    return info && info->hasByteTableLookup();
  }

  std::vector<std::string> targetNames() const override {
    std::vector<std::string> names;
    for (llvm::StringRef name : mlir::lowbit::getTargetNames())
      names.push_back(name.str());
    return names;
  }
};

} // namespace

extern "C" lowbit::jit::Codegen *lowbit_codegen_create() {
  static PipelineCodegen codegen;
  return &codegen;
}
