// Every error of lowbit-select-config, one RUN line each: the file and the
// entry at fault are named, and the pass fails.

// RUN: not lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni threads=2 schedule=%S/Inputs/schedule-version.json" 2>&1 | FileCheck %s --check-prefix=VERSION
// VERSION: error: schedule '{{.*}}Inputs/schedule-version.json': unsupported "version" 3; this lowbit reads versions 1 to 2

// RUN: not lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni threads=2 schedule=%S/Inputs/schedule-truncated.json" 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// TRUNCATED: error: schedule '{{.*}}Inputs/schedule-truncated.json': invalid JSON: {{.*}}
// TRUNCATED-NOT: config =

// RUN: not lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni threads=2 schedule=%S/Inputs/schedule-v2-missing-us.json" 2>&1 | FileCheck %s --check-prefix=V2US
// V2US: error: schedule '{{.*}}Inputs/schedule-v2-missing-us.json': entries[0]: "us" is missing

// RUN: not lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni threads=2 schedule=%S/Inputs/schedule-v2-no-cpu.json" 2>&1 | FileCheck %s --check-prefix=V2CPU
// V2CPU: error: schedule '{{.*}}Inputs/schedule-v2-no-cpu.json': "cpu" must be an object with a string "model" and an array "features"

// RUN: not lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni threads=2 schedule=%S/Inputs/schedule-malformed.json" 2>&1 | FileCheck %s --check-prefix=MALFORMED
// MALFORMED: error: schedule '{{.*}}Inputs/schedule-malformed.json': invalid JSON: [2:31, byte=59]: Expected object key

// RUN: not lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni threads=2 schedule=%S/Inputs/schedule-missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: schedule '{{.*}}Inputs/schedule-missing.json': entries[0]: "K" is missing

// RUN: not lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni threads=2 schedule=%S/Inputs/schedule-nclass.json" 2>&1 | FileCheck %s --check-prefix=NCLASS
// NCLASS: error: schedule '{{.*}}Inputs/schedule-nclass.json': entries[0]: "n_class" must be "gemv" or "gemm", got "gemvv"

// RUN: not lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni threads=2 schedule=%S/Inputs/schedule-parse.json" 2>&1 | FileCheck %s --check-prefix=PARSE
// PARSE: error: schedule '{{.*}}Inputs/schedule-parse.json': entries[0]: cannot parse config '#lowbit.upconvert<tile_m = 32>': struct is missing required parameter: tile_k

// RUN: not lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni threads=2 schedule=%S/Inputs/schedule-verify.json" 2>&1 | FileCheck %s --check-prefix=VERIFY
// VERIFY: error: 'lowbit.mpgemm' op schedule '{{.*}}Inputs/schedule-verify.json': entries[0]: config #lowbit.upconvert<tile_m = 24, tile_k = 64, tile_n = 1> does not fit this op: upconvert tile_m must be a multiple of 16 (rows per packed tile), got 24

// RUN: not lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni schedule=%S/Inputs/does-not-exist.json" 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: error: schedule '{{.*}}Inputs/does-not-exist.json': cannot read: No such file or directory

// RUN: not lowbit-opt %s --lowbit-select-config="target=x86-sse2" 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: error: lowbit-select-config: unknown target 'x86-sse2'; expected one of x86-amx, x86-avx512vnni, x86-avxvnni, x86-avx2, aarch64-neon, aarch64-neon-nodot, generic

// RUN: not lowbit-opt %s "--lowbit-select-config=config='#lowbit.layout<i2s>'" 2>&1 | FileCheck %s --check-prefix=NOTCONFIG
// NOTCONFIG: error: config option: '#lowbit.layout<i2s>' is not a strategy config

// RUN: not lowbit-opt %s "--lowbit-select-config=config='#lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1>'" 2>&1 | FileCheck %s --check-prefix=OVERRIDE
// OVERRIDE: error: 'lowbit.mpgemm' op config option: config #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1> does not fit this op: upconvert strategy does not support 3-bit unsigned weights

// RUN: not lowbit-opt %s --lowbit-select-config 2>&1 | FileCheck %s --check-prefix=W3
// W3: error: 'lowbit.mpgemm' op has no heuristic config for w3g32 weights (the upconvert strategy needs 1, 2 or 4 bits); give a config or a schedule entry

func.func @i2s_2560(%x: tensor<?x2560xf32>, %w: tensor<2560x640xi8>, %s: tensor<1xf32>) -> tensor<?x2560xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>}
       : (tensor<?x2560xf32>, tensor<2560x640xi8>, tensor<1xf32>) -> tensor<?x2560xf32>
  return %y : tensor<?x2560xf32>
}

func.func @w3(%x: tensor<?x256xf32>, %w: tensor<64x96xi8>, %s: tensor<64x8x2xf16>) -> tensor<?x64xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 3, encoding = unsigned, group = 32, scale = per_group>,
         layout = #lowbit.layout<canonical>}
       : (tensor<?x256xf32>, tensor<64x96xi8>, tensor<64x8x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
