"""Checks `lowbit tune --list` of a sweep against the lists of its shards.

shard_lists.py WHOLE SHARD0 SHARD1 ...: every problem of WHOLE is listed by
exactly one shard, with the same candidates in the same order; every shard
names the same sweep and the sweep's problem count; each problem is in the
shard that longest-processing-time-first gives it (written here again from
Sweep.h's description: heaviest first, ties by key, to the lightest shard,
ties to the lowest index; the weight is the number of candidates). The
shards' problem counts are printed in shard order.
"""
import re
import sys


def problems(path):
    """The header line (a shard's) and {problem label: [candidate lines]}."""
    header, listed, current = None, {}, None
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("shard "):
            header = line
        elif line.startswith("  "):
            listed[current].append(line)
        else:
            current = line.split(":")[0]
            assert current not in listed, (path, current)
            listed[current] = []
    return header, listed


_, whole = problems(sys.argv[1])
seen, sweeps, counts = {}, set(), []
for index, path in enumerate(sys.argv[2:]):
    header, shard = problems(path)
    match = re.fullmatch(r"shard (\d+)/(\d+) of sweep ([0-9a-f]{16}): "
                         r"(\d+) of the sweep's (\d+) problems", header)
    assert match, header
    assert int(match[1]) == index and int(match[2]) == len(sys.argv) - 2
    assert int(match[5]) == len(whole) and int(match[4]) == len(shard)
    sweeps.add(match[3])
    counts.append(len(shard))
    for label, candidates in shard.items():
        assert label not in seen, (label, seen[label], index)
        seen[label] = index
        assert candidates == whole[label], (label, candidates, whole[label])
assert sorted(seen) == sorted(whole), (sorted(seen), sorted(whole))


def key(label):
    # "i2s 64x256 gemv x86-avx2 [2t]" -> the schedule key's order (format, M,
    # K, n_class, target, threads; the label names the threads when the sweep
    # has several counts).
    fmt, shape, n_class, target, *threads = label.split()
    m, k = shape.split("x")
    return (fmt, int(m), int(k), n_class, target,
            int(threads[0][:-1]) if threads else 0)


load = [0] * len(counts)
for label in sorted(whole, key=lambda l: (-len(whole[l]), key(l))):
    lightest = load.index(min(load))
    assert seen[label] == lightest, (label, seen[label], lightest)
    load[lightest] += len(whole[label])
assert len(sweeps) == 1, sweeps
print(f"{len(whole)} problems in {len(counts)} shards of "
      f"{'/'.join(map(str, counts))}: each in one shard, with the sweep's "
      f"candidates in its order")
