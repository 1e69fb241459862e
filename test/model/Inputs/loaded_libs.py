"""Prints the files the dynamic loader mapped into the lowbit process, from
its LD_DEBUG=files log (LD_DEBUG_OUTPUT=PREFIX writes one PREFIX.<pid> per
process: lowbit's and those of the programs it runs, such as the C++
compiler, which are left out)."""
import glob
import re
import sys

prefix = sys.argv[1]
logs = []
for path in glob.glob(glob.escape(prefix) + ".*"):
    with open(path) as f:
        text = f.read()
    if re.search(r"needed by \S*/lowbit \[0\]", text):
        logs.append(text)
if len(logs) != 1:
    sys.exit(f"expected the log of one lowbit process, found {len(logs)}")
for name in sorted(set(re.findall(r"\bfile=(\S+) \[\d+\];  (?:needed|dynamically)",
                                  logs[0]))):
    print(name)
