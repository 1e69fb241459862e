"""Checks what `lowbit tune` wrote, without looking at timings.

tune_check.py visited OUT  -> the candidate configs OUT lists, one a line
tune_check.py schedule S VISITED  -> S is a version-2 schedule whose entry for
    the tuned key names one of the VISITED configs and the heuristic (the
    first visited), and whose entries are sorted by key
"""
import json
import sys


def visited(out):
    # Candidate lines: two spaces, "H " for the heuristic, the timing, the
    # config ("  FAIL <config>: ..." for a rejected one).
    for line in open(out):
        if line.startswith("  ") and "#lowbit." in line:
            config = line[line.index("#lowbit."):].rstrip("\n")
            if line.startswith("  FAIL "):
                config = config.split(": ")[0]
            print(("H " if line.startswith("  H ") else "  ") + config)


def schedule(path, visited_path):
    configs = [l[2:].rstrip("\n") for l in open(visited_path)]
    data = json.load(open(path))
    assert data["version"] == 2, data["version"]
    assert data["cpu"]["model"] is not None and data["tool_version"]
    keys = [(e["format"], e["M"], e["K"], e["n_class"], e["target"],
             e["threads"]) for e in data["entries"]]
    assert keys == sorted(keys), keys
    tuned = [e for e in data["entries"] if (e["M"], e["K"]) == (64, 256)]
    assert len(tuned) == 1, tuned
    entry = tuned[0]
    assert entry["config"] in configs, (entry["config"], configs)
    assert entry["heuristic_config"] == configs[0], entry
    assert entry["us"] > 0 and entry["heuristic_us"] > 0 and entry["gbps"] > 0
    print("schedule ok:", len(data["entries"]), "entries")


if sys.argv[1] == "visited":
    visited(sys.argv[2])
else:
    schedule(sys.argv[2], sys.argv[3])
