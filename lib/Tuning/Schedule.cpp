//===- Schedule.cpp - tuned configs keyed by problem ----------------------===//

#include "lowbit/Tuning/Schedule.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <tuple>

using namespace llvm;
using namespace mlir::lowbit;

bool ScheduleKey::operator==(const ScheduleKey &other) const {
  return format == other.format && m == other.m && k == other.k &&
         nClass == other.nClass && target == other.target &&
         threads == other.threads;
}

bool ScheduleKey::operator<(const ScheduleKey &other) const {
  return std::tie(format, m, k, nClass, target, threads) <
         std::tie(other.format, other.m, other.k, other.nClass, other.target,
                  other.threads);
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

std::string ShardInfo::str() const {
  return std::to_string(index) + "/" + std::to_string(count);
}

namespace {
/// Reads the fields of one object of the file (`where`: "entries[3]"),
/// failing on the first bad one.
class EntryReader {
public:
  EntryReader(StringRef name, std::string where, const json::Object &object)
      : name(name), where(std::move(where)), object(object) {}

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

  Error getPositiveNumber(StringRef field, double &out) {
    const json::Value *value = object.get(field);
    if (!value)
      return fieldError(field, "is missing");
    std::optional<double> number = value->getAsNumber();
    if (!number || !(*number > 0) || !std::isfinite(*number))
      return fieldError(field, "must be a positive number");
    out = *number;
    return Error::success();
  }

  Error fieldError(StringRef field, const Twine &problem) {
    return scheduleError(name,
                         formatv("{0}: \"{1}\" ", where, field) + problem);
  }

  /// The key's fields (format, M, K, n_class, target, threads).
  Error getKey(ScheduleKey &key) {
    if (Error error = getString("format", key.format))
      return error;
    if (Error error = getPositive("M", key.m))
      return error;
    if (Error error = getPositive("K", key.k))
      return error;
    if (Error error = getString("n_class", key.nClass))
      return error;
    if (key.nClass != "gemv" && key.nClass != "gemm")
      return fieldError("n_class", "must be \"gemv\" or \"gemm\", got \"" +
                                       key.nClass + "\"");
    if (Error error = getString("target", key.target))
      return error;
    return getPositive("threads", key.threads);
  }

private:
  StringRef name;
  std::string where;
  const json::Object &object;
};

/// The "shard" object of a shard file.
Expected<ShardInfo> parseShard(StringRef name, const json::Value &value) {
  const json::Object *object = value.getAsObject();
  if (!object)
    return scheduleError(name, "\"shard\" must be an object");
  EntryReader reader(name, "shard", *object);
  ShardInfo shard;
  if (Error error = reader.getPositive("count", shard.count))
    return std::move(error);
  std::optional<int64_t> index = object->getInteger("index");
  if (!index || *index < 0 || *index >= shard.count)
    return reader.fieldError("index", formatv("must be an integer from 0 to "
                                              "{0} (count - 1)",
                                              shard.count - 1));
  shard.index = *index;
  if (Error error = reader.getString("sweep", shard.sweep))
    return std::move(error);
  if (Error error = reader.getPositive("sweep_problems", shard.sweepProblems))
    return std::move(error);
  std::optional<bool> complete = object->getBoolean("complete");
  if (!complete)
    return reader.fieldError("complete", "must be true or false");
  shard.complete = *complete;
  const json::Array *problems = object->getArray("problems");
  if (!problems)
    return reader.fieldError("problems", "must be an array");
  for (auto [i, problem] : llvm::enumerate(*problems)) {
    const json::Object *fields = problem.getAsObject();
    if (!fields)
      return scheduleError(
          name, formatv("shard: problems[{0}] must be an object", i));
    EntryReader keyReader(name, formatv("shard: problems[{0}]", i).str(),
                          *fields);
    ScheduleKey key;
    if (Error error = keyReader.getKey(key))
      return std::move(error);
    shard.problems.push_back(std::move(key));
  }
  return shard;
}
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
  if (!versionNumber || *versionNumber < 1 || *versionNumber > kVersion)
    return scheduleError(name, formatv("unsupported \"version\" {0}; this "
                                       "lowbit reads versions 1 to {1}",
                                       *version, kVersion));
  const json::Array *array = object->getArray("entries");
  if (!array)
    return scheduleError(name, "\"entries\" must be an array");

  Schedule schedule;
  schedule.name = name.str();
  schedule.version = *versionNumber;
  bool measured = *versionNumber >= 2;
  if (measured) {
    std::optional<StringRef> tool = object->getString("tool_version");
    if (!tool)
      return scheduleError(name, "\"tool_version\" must be a string");
    schedule.toolVersion = tool->str();
    const json::Object *cpu = object->getObject("cpu");
    std::optional<StringRef> model =
        cpu ? cpu->getString("model") : std::nullopt;
    const json::Array *features = cpu ? cpu->getArray("features") : nullptr;
    if (!model || !features)
      return scheduleError(name, "\"cpu\" must be an object with a string "
                                 "\"model\" and an array \"features\"");
    schedule.cpuModel = model->str();
    for (const json::Value &feature : *features) {
      std::optional<StringRef> text = feature.getAsString();
      if (!text)
        return scheduleError(name, "\"cpu\": \"features\" must hold strings");
      schedule.cpuFeatures.push_back(text->str());
    }
    if (const json::Value *shard = object->get("shard")) {
      Expected<ShardInfo> info = parseShard(name, *shard);
      if (!info)
        return info.takeError();
      schedule.shard = std::move(*info);
    }
  }
  for (auto [index, value] : llvm::enumerate(*array)) {
    const json::Object *fields = value.getAsObject();
    if (!fields)
      return scheduleError(name,
                           formatv("entries[{0}] must be an object", index));
    EntryReader reader(name, formatv("entries[{0}]", index).str(), *fields);
    ScheduleEntry entry;
    entry.index = index;
    ScheduleKey &key = entry.key;
    if (Error error = reader.getKey(key))
      return std::move(error);
    if (Error error = reader.getString("config", entry.config))
      return std::move(error);
    if (measured) {
      if (Error error = reader.getPositiveNumber("us", entry.us))
        return std::move(error);
      if (Error error = reader.getPositiveNumber("gbps", entry.gbps))
        return std::move(error);
      if (Error error =
              reader.getString("heuristic_config", entry.heuristicConfig))
        return std::move(error);
      if (Error error =
              reader.getPositiveNumber("heuristic_us", entry.heuristicUs))
        return std::move(error);
    }
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

void Schedule::set(ScheduleEntry entry) {
  for (ScheduleEntry &existing : entries)
    if (existing.key == entry.key) {
      existing = std::move(entry);
      return;
    }
  entries.push_back(std::move(entry));
}

std::string Schedule::str() const {
  std::vector<const ScheduleEntry *> sorted;
  for (const ScheduleEntry &entry : entries)
    sorted.push_back(&entry);
  llvm::sort(sorted, [](const ScheduleEntry *a, const ScheduleEntry *b) {
    return a->key < b->key;
  });
  std::string text;
  raw_string_ostream os(text);
  json::OStream out(os, /*IndentSize=*/2);
  out.object([&] {
    out.attribute("version", kVersion);
    out.attribute("tool_version", toolVersion);
    out.attributeObject("cpu", [&] {
      out.attribute("model", cpuModel);
      out.attributeArray("features", [&] {
        for (const std::string &feature : cpuFeatures)
          out.value(feature);
      });
    });
    auto keyFields = [&](const ScheduleKey &key) {
      out.attribute("format", key.format);
      out.attribute("M", key.m);
      out.attribute("K", key.k);
      out.attribute("n_class", key.nClass);
      out.attribute("target", key.target);
      out.attribute("threads", key.threads);
    };
    if (shard)
      out.attributeObject("shard", [&] {
        out.attribute("index", shard->index);
        out.attribute("count", shard->count);
        out.attribute("sweep", shard->sweep);
        out.attribute("sweep_problems", shard->sweepProblems);
        out.attribute("complete", shard->complete);
        out.attributeArray("problems", [&] {
          for (const ScheduleKey &key : shard->problems)
            out.object([&] { keyFields(key); });
        });
      });
    out.attributeArray("entries", [&] {
      for (const ScheduleEntry *entry : sorted)
        out.object([&] {
          keyFields(entry->key);
          out.attribute("config", entry->config);
          // Measurements with 4 significant digits (more is noise).
          auto measurement = [&](StringRef field, double value) {
            out.attributeBegin(field);
            out.rawValue(formatv("{0}", format("%.4g", value)).str());
            out.attributeEnd();
          };
          measurement("us", entry->us);
          measurement("gbps", entry->gbps);
          out.attribute("heuristic_config", entry->heuristicConfig);
          measurement("heuristic_us", entry->heuristicUs);
        });
    });
  });
  os << "\n";
  return text;
}

Error Schedule::write(StringRef path) const {
  std::string temporary = (path + ".tmp").str();
  {
    std::error_code ec;
    raw_fd_ostream out(temporary, ec);
    if (ec)
      return scheduleError(path,
                           "cannot write " + temporary + ": " + ec.message());
    out << str();
    out.close();
    if (out.has_error())
      return scheduleError(path, "cannot write " + temporary + ": " +
                                     out.error().message());
  }
  if (std::error_code ec = sys::fs::rename(temporary, path))
    return scheduleError(path,
                         "cannot rename " + temporary + ": " + ec.message());
  return Error::success();
}
