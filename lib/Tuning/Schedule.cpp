//===- Schedule.cpp - tuned configs keyed by problem ----------------------===//

#include "lowbit/Tuning/Schedule.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;
using namespace mlir::lowbit;

bool ScheduleKey::operator==(const ScheduleKey &other) const {
  return format == other.format && m == other.m && k == other.k &&
         nClass == other.nClass && target == other.target &&
         threads == other.threads;
}

std::string ScheduleKey::str() const {
  return formatv("format={0} M={1} K={2} n_class={3} target={4} threads={5}",
                 format, m, k, nClass, target, threads)
      .str();
}

static Error scheduleError(StringRef name, const Twine &message) {
  return createStringError(inconvertibleErrorCode(),
                           "schedule '" + name + "': " + message);
}

namespace {
/// Reads the fields of entries[index], failing on the first bad one.
class EntryReader {
public:
  EntryReader(StringRef name, size_t index, const json::Object &object)
      : name(name), index(index), object(object) {}

  Error getString(StringRef field, std::string &out) {
    const json::Value *value = object.get(field);
    if (!value)
      return fieldError(field, "is missing");
    std::optional<StringRef> text = value->getAsString();
    if (!text)
      return fieldError(field, "must be a string");
    out = text->str();
    return Error::success();
  }

  Error getPositive(StringRef field, int64_t &out) {
    const json::Value *value = object.get(field);
    if (!value)
      return fieldError(field, "is missing");
    std::optional<int64_t> number = value->getAsInteger();
    if (!number || *number <= 0)
      return fieldError(field, "must be a positive integer");
    out = *number;
    return Error::success();
  }

  Error fieldError(StringRef field, const Twine &problem) {
    return scheduleError(name, formatv("entries[{0}]: \"{1}\" ", index, field) +
                                   problem);
  }

private:
  StringRef name;
  size_t index;
  const json::Object &object;
};
} // namespace

Expected<Schedule> Schedule::parse(StringRef text, StringRef name) {
  Expected<json::Value> root = json::parse(text);
  if (!root)
    return scheduleError(name, "invalid JSON: " + toString(root.takeError()));
  const json::Object *object = root->getAsObject();
  if (!object)
    return scheduleError(name, "the top level must be a JSON object");
  const json::Value *version = object->get("version");
  if (!version)
    return scheduleError(name, "\"version\" is missing");
  std::optional<int64_t> versionNumber = version->getAsInteger();
  if (!versionNumber || *versionNumber != kVersion)
    return scheduleError(name, formatv("unsupported \"version\" {0}; this "
                                       "lowbit reads version {1}",
                                       *version, kVersion));
  const json::Array *array = object->getArray("entries");
  if (!array)
    return scheduleError(name, "\"entries\" must be an array");

  Schedule schedule;
  schedule.name = name.str();
  for (auto [index, value] : llvm::enumerate(*array)) {
    const json::Object *fields = value.getAsObject();
    if (!fields)
      return scheduleError(name,
                           formatv("entries[{0}] must be an object", index));
    EntryReader reader(name, index, *fields);
    ScheduleEntry entry;
    entry.index = index;
    ScheduleKey &key = entry.key;
    if (Error error = reader.getString("format", key.format))
      return std::move(error);
    if (Error error = reader.getPositive("M", key.m))
      return std::move(error);
    if (Error error = reader.getPositive("K", key.k))
      return std::move(error);
    if (Error error = reader.getString("n_class", key.nClass))
      return std::move(error);
    if (key.nClass != "gemv" && key.nClass != "gemm")
      return reader.fieldError("n_class",
                               "must be \"gemv\" or \"gemm\", got \"" +
                                   key.nClass + "\"");
    if (Error error = reader.getString("target", key.target))
      return std::move(error);
    if (Error error = reader.getPositive("threads", key.threads))
      return std::move(error);
    if (Error error = reader.getString("config", entry.config))
      return std::move(error);
    if (const ScheduleEntry *previous = schedule.lookup(key))
      return scheduleError(name, formatv("entries[{0}] repeats the key of "
                                         "entries[{1}] ({2})",
                                         index, previous->index, key.str()));
    schedule.entries.push_back(std::move(entry));
  }
  return schedule;
}

Expected<Schedule> Schedule::load(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return scheduleError(path, "cannot read: " + buffer.getError().message());
  return parse((*buffer)->getBuffer(), path);
}

const ScheduleEntry *Schedule::lookup(const ScheduleKey &key) const {
  for (const ScheduleEntry &entry : entries)
    if (entry.key == key)
      return &entry;
  return nullptr;
}
