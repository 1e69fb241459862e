#!/usr/bin/env python3
"""Statistics of the lookup loop of AArch64 LUT kernels, from assembly.

    scripts/aarch64-loop-stats.py [--mnemonic M] [--mca CPU] KERNEL.s [...]

For each function of each .s file (clang or GNU syntax, e.g. from
`clang++-22 --target=aarch64-linux-gnu -O2 -S` or
`aarch64-linux-gnu-g++ -O2 -S` of a `lowbit compile` kernel file), takes the
smallest loop (a backward branch to a label) with at least 8 of mnemonic M
(default `tbl`: the K loop of the lut-elementwise and lut-bitserial
kernels; `sdot` or `smull` finds the up-convert one) and prints its
instruction count, its count of M, its stack loads/stores (ldr, str, ldp,
stp, ld1, st1, ldur, stur addressing sp or x29: spills and reloads, as the
kernels keep nothing else on the stack in that loop; the tables are
addressed through other registers) and its most frequent mnemonics. With
--mca CPU, also the cycles per iteration llvm-mca-22 -mcpu=CPU predicts
for the loop body (a scheduling model, not a measurement).
"""
import argparse
import re
import subprocess

BRANCH = re.compile(r'^\s+(b|b\.?[a-z]{2}|[ct]bn?z)\s.*?(\.L\w+)\s*(//.*)?$')
STACK = re.compile(r'^\s+(ldr|str|ldp|stp|ld1|st1|ldur|stur)\b.*\[(sp|x29)\b')


def functions(lines):
    name, body = None, []
    for line in lines:
        m = re.match(r'^([A-Za-z_][\w.]*):', line)
        if m:
            if name:
                yield name, body
            name, body = m.group(1), []
        elif name:
            body.append(line)
    if name:
        yield name, body


def instructions(lines):
    return [l for l in lines
            if re.match(r'^\s+[a-z]', l) and not l.strip().startswith('.')]


def find_loop(lines, mnemonic):
    labels = {m.group(1): i for i, l in enumerate(lines)
              if (m := re.match(r'^(\.L\w+):', l))}
    best = None
    for i, line in enumerate(lines):
        m = BRANCH.match(line)
        if m and labels.get(m.group(2), i) < i:
            body = instructions(lines[labels[m.group(2)]:i + 1])
            count = sum(1 for x in body if x.split()[0] == mnemonic)
            if count >= 8 and (best is None or len(body) < len(best)):
                best = body
    return best


def mca_cycles(loop, cpu):
    source = '\n'.join(x.split('//')[0] for x in loop) + '\n'
    out = subprocess.run(['llvm-mca-22', '-mtriple=aarch64', f'-mcpu={cpu}',
                          '-iterations=100'], input=source,
                         capture_output=True, text=True, check=True).stdout
    return int(re.search(r'Total Cycles:\s+(\d+)', out).group(1)) / 100


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--mnemonic', default='tbl')
    parser.add_argument('--mca', metavar='CPU')
    parser.add_argument('files', nargs='+')
    args = parser.parse_args()
    for path in args.files:
        with open(path) as f:
            lines = f.read().splitlines()
        for name, body in functions(lines):
            loop = find_loop(body, args.mnemonic)
            if not loop:
                continue
            counts = {}
            for x in loop:
                counts[x.split()[0]] = counts.get(x.split()[0], 0) + 1
            top = ', '.join(f'{k} {v}' for k, v in
                            sorted(counts.items(), key=lambda kv: -kv[1])[:8])
            stack = sum(1 for x in loop if STACK.match(x))
            line = (f'{name}: {len(loop)} instructions, '
                    f'{counts.get(args.mnemonic, 0)} {args.mnemonic}, '
                    f'{stack} stack loads/stores ({top})')
            if args.mca:
                line += f'; {mca_cycles(loop, args.mca):.1f} cycles/iteration on {args.mca}'
            print(line)


if __name__ == '__main__':
    main()
