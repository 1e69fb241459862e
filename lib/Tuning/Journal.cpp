//===- Journal.cpp - the tuner's append-only record -----------------------===//

#include "lowbit/Tuning/Journal.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

#include <unistd.h>

using namespace llvm;
using namespace mlir::lowbit;

Error TuneJournal::append(const ScheduleKey &key, json::Object fields) {
  fields["format"] = key.format;
  fields["M"] = key.m;
  fields["K"] = key.k;
  fields["n_class"] = key.nClass;
  fields["target"] = key.target;
  fields["threads"] = key.threads;
  int fd = -1;
  if (std::error_code ec = sys::fs::openFileForWrite(
          path_, fd, sys::fs::CD_OpenAlways, sys::fs::OF_Append))
    return createStringError("cannot append to the journal " + path_ + ": " +
                             ec.message());
  {
    raw_fd_ostream os(fd, /*shouldClose=*/false);
    os << json::Value(std::move(fields)) << '\n';
  }
  ::fsync(fd);
  ::close(fd);
  return Error::success();
}

Error TuneJournal::appendDecision(const ScheduleEntry &entry,
                                  StringRef status) {
  return append(entry.key, json::Object{{"decision", status},
                                        {"config", entry.config},
                                        {"us", entry.us},
                                        {"gbps", entry.gbps},
                                        {"heuristic_config",
                                         entry.heuristicConfig},
                                        {"heuristic_us", entry.heuristicUs}});
}

std::vector<ScheduleEntry> TuneJournal::recover() const {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(path_, /*IsText=*/true);
  if (!buffer)
    return {};
  std::map<ScheduleKey, ScheduleEntry> decided;
  SmallVector<StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef text : lines) {
    Expected<json::Value> value = json::parse(text);
    if (!value) {
      consumeError(value.takeError());
      continue;
    }
    const json::Object *line = value->getAsObject();
    if (!line || !line->getString("decision"))
      continue;
    auto str = [&](StringRef field) {
      return line->getString(field).value_or("").str();
    };
    auto num = [&](StringRef field) { return line->getNumber(field); };
    auto integer = [&](StringRef field) { return line->getInteger(field); };
    if (!integer("M") || !integer("K") || !integer("threads") || !num("us") ||
        !num("gbps") || !num("heuristic_us") || str("config").empty())
      continue;
    ScheduleEntry entry;
    entry.key = {str("format"),  *integer("M"),   *integer("K"),
                 str("n_class"), str("target"),   *integer("threads")};
    entry.config = str("config");
    entry.us = *num("us");
    entry.gbps = *num("gbps");
    entry.heuristicConfig = str("heuristic_config");
    entry.heuristicUs = *num("heuristic_us");
    decided[entry.key] = entry;
  }
  std::vector<ScheduleEntry> entries;
  for (auto &[key, entry] : decided)
    entries.push_back(entry);
  return entries;
}

bool TuneJournal::exists() const { return sys::fs::exists(path_); }

void TuneJournal::clear() const { sys::fs::remove(path_); }
