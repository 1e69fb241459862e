# -*- Python -*-
# lit configuration for the lowbit tests (test/Dialect, test/cli, ...).
# Loaded through build/test/lit.site.cfg.py, which sets the paths used here.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "LOWBIT"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs",
                   "README.md"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.lowbit_obj_root, "test")

# FileCheck, not and count from the LLVM tools directory.
llvm_config.use_default_substitutions()

# %python is the system Python (it has numpy), not the one running lit.
config.substitutions = [s for s in config.substitutions if s[0] != "%python"]
config.substitutions.append(("%python", config.python_executable))
# %lowbit_src before %lowbit: the second is a prefix of the first.
config.substitutions.append(("%lowbit_src", config.lowbit_src_root))
config.substitutions.append(
    ("%lowbit", os.path.join(config.lowbit_tools_dir, "lowbit")))

# %clangxx compiles the C++ that the EmitC conversions emit (smoke tests).
clangxx = "/usr/bin/clang++-22"
if os.path.exists(clangxx):
    config.available_features.add("clangxx")
    config.substitutions.append(("%clangxx", clangxx))

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Generated kernels that tests compile (test/e2e, test/model, test/interop)
# are cached once per machine, as ccache caches the build: lib/Jit's kernel
# cache keys each object by the SHA-256 of its source, the compiler's
# identity and its flags, so a fresh clone (CI) reuses what an earlier run on
# this machine compiled and recompiles exactly the kernels whose code
# changed. LOWBIT_TEST_KERNEL_CACHE names another directory.
config.lowbit_kernel_cache = os.environ.get("LOWBIT_TEST_KERNEL_CACHE") or \
    os.path.join(os.path.expanduser("~"), ".cache", "lowbit-test-kernels")
llvm_config.with_environment("PATH", config.lowbit_tools_dir, append_path=True)

# The project's binaries from build/bin. The CLI may not be built (yet).
llvm_config.add_tool_substitutions(
    [ToolSubst("lowbit-opt", unresolved="fatal"),
     ToolSubst("lowbit", unresolved="ignore")],
    [config.lowbit_tools_dir])

# spirv-val (SPIRV-Tools) validates every SPIR-V module the GPU targets emit.
# Where Debian 12's SPIRV-Tools (2023.1) does not know cooperative matrices,
# scripts/spirv-tools.sh builds Debian 13's and links it as build/spirv-tools.
import shutil
import subprocess
spirv_tools = os.path.join(config.lowbit_obj_root, "spirv-tools")
if os.path.isdir(spirv_tools):
    llvm_config.with_environment("PATH", spirv_tools, append_path=True)
tool_path = config.environment["PATH"]
if shutil.which("spirv-val", path=tool_path):
    config.available_features.add("spirv-val")
# spirv-val-coopmat: SPIRV-Tools that knows SPV_KHR_cooperative_matrix,
# probed by assembling a module that declares it.
spirv_as = shutil.which("spirv-as", path=tool_path)
if spirv_as:
    probe = subprocess.run(
        [spirv_as, "--target-env", "vulkan1.3", "-o", os.devnull, "-"],
        input="OpCapability Shader\nOpCapability CooperativeMatrixKHR\n"
              "OpExtension \"SPV_KHR_cooperative_matrix\"\n"
              "OpMemoryModel Logical GLSL450\n",
        capture_output=True, text=True)
    if probe.returncode == 0:
        config.available_features.add("spirv-val-coopmat")

# llama-cpp: the pinned llama.cpp and our driver programs that
# scripts/llama-cpp.sh links as build/llama.cpp (test/interop).
if os.path.exists(os.path.join(config.lowbit_obj_root, "llama.cpp", "tools",
                               "ggml-quantize")):
    config.available_features.add("llama-cpp")

# slurm: Debian's slurm-wlm and munge, which test/slurm starts as a private
# one-node cluster (its lit.local.cfg drops the feature, saying why, where
# the daemons cannot start).
slurm_path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
slurm_missing = [tool for tool in ["slurmctld", "slurmd", "munged", "sbatch"]
                 if not shutil.which(tool, path=slurm_path)]
if not slurm_missing:
    config.available_features.add("slurm")
else:
    lit_config.note("test/slurm is UNSUPPORTED: " + ", ".join(slurm_missing) +
                    " not found (apt-get install slurm-wlm munge)")
