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
llvm_config.with_environment("PATH", config.lowbit_tools_dir, append_path=True)

# The project's binaries from build/bin. The CLI may not be built (yet).
llvm_config.add_tool_substitutions(
    [ToolSubst("lowbit-opt", unresolved="fatal"),
     ToolSubst("lowbit", unresolved="ignore")],
    [config.lowbit_tools_dir])

# spirv-val (SPIRV-Tools) validates every SPIR-V module the GPU targets emit.
import shutil
if shutil.which("spirv-val"):
    config.available_features.add("spirv-val")
# spirv-val-coopmat: SPIRV-Tools new enough to know SPV_KHR_cooperative_matrix
# (2023.1, Debian 12's, is not: it rejects the capability), probed by
# assembling a module that declares it.
if shutil.which("spirv-as"):
    import subprocess
    probe = subprocess.run(
        ["spirv-as", "--target-env", "vulkan1.3", "-o", os.devnull, "-"],
        input="OpCapability Shader\nOpCapability CooperativeMatrixKHR\n"
              "OpExtension \"SPV_KHR_cooperative_matrix\"\n"
              "OpMemoryModel Logical GLSL450\n",
        capture_output=True, text=True)
    if probe.returncode == 0:
        config.available_features.add("spirv-val-coopmat")
