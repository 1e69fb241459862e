#!/usr/bin/env bash
# Provides spirv-val/spirv-as that know SPV_KHR_cooperative_matrix, for the
# lit tests that validate the spirv-xe2 matrix kernels. Debian 12's
# spirv-tools (2023.1) rejects the capability; Debian 13's source package
# (2025.1) knows it, so this builds its spirv-val and spirv-as from Debian's
# source archive (no other network access needed) into a per-machine cache
# and links them as build/spirv-tools. Nothing is installed system-wide.
#
# Skipped when the system's tools already know the extension. On any failure
# it says so on one line and exits 0: the matrix validation tests then report
# UNSUPPORTED instead of failing the suite.
#
#   bash scripts/spirv-tools.sh        # called by scripts/setup.sh
set -uo pipefail
cd "$(dirname "$0")/.."

link=build/spirv-tools
probe_input='OpCapability Shader
OpCapability CooperativeMatrixKHR
OpExtension "SPV_KHR_cooperative_matrix"
OpMemoryModel Logical GLSL450
'
knows_coopmat() { printf '%s' "$probe_input" | "$1" --target-env vulkan1.3 -o /dev/null - 2>/dev/null; }

if command -v spirv-as >/dev/null && knows_coopmat spirv-as; then
  rm -f "$link"
  exit 0
fi

cache="${XDG_CACHE_HOME:-$HOME/.cache}/lowbit/spirv-tools"
if [ -x "$cache/bin/spirv-as" ] && knows_coopmat "$cache/bin/spirv-as"; then
  ln -sfn "$cache/bin" "$link"
  exit 0
fi

fail() {
  echo "spirv-tools: $1; the cooperative-matrix validation tests will be UNSUPPORTED"
  exit 0
}

echo "spirv-tools: building spirv-val/spirv-as 2025 from Debian 13's source package (once per machine, a few minutes)"
work="$cache/src"
rm -rf "$work" && mkdir -p "$work/lists/partial" "$work/cache/archives/partial" || fail "cannot create $work"
echo "deb-src http://deb.debian.org/debian trixie main" >"$work/sources.list"
apt_opts=(-o "Dir::Etc::sourcelist=$work/sources.list" -o Dir::Etc::sourceparts=-
  -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o APT::Sandbox::User=root -qq)
apt-get "${apt_opts[@]}" update >/dev/null 2>&1 || fail "apt-get update of the trixie source index failed"
# The .orig tarballs are all this needs; a missing .dsc is not fatal.
(cd "$work" && apt-get "${apt_opts[@]}" source --download-only spirv-tools spirv-headers >/dev/null 2>&1)
tools_tar=$(ls "$work"/spirv-tools_*.orig.tar.* 2>/dev/null | head -1)
headers_tar=$(ls "$work"/spirv-headers_*.orig.tar.* 2>/dev/null | head -1)
[ -n "$tools_tar" ] && [ -n "$headers_tar" ] || fail "could not download the spirv-tools/spirv-headers sources"
mkdir -p "$work/tools" "$work/headers"
tar xf "$tools_tar" -C "$work/tools" --strip-components=1 &&
  tar xf "$headers_tar" -C "$work/headers" --strip-components=1 || fail "could not unpack the sources"

cmake -G Ninja -S "$work/tools" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DSPIRV-Headers_SOURCE_DIR="$work/headers" -DSPIRV_SKIP_TESTS=ON -DSPIRV_WERROR=OFF \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  >"$work/cmake.log" 2>&1 || fail "cmake failed (see $work/cmake.log)"
ninja -C "$work/build" spirv-val spirv-as >"$work/build.log" 2>&1 ||
  fail "build failed (see $work/build.log)"
mkdir -p "$cache/bin" &&
  cp "$work/build/tools/spirv-val" "$work/build/tools/spirv-as" "$cache/bin/" ||
  fail "could not install into $cache/bin"
knows_coopmat "$cache/bin/spirv-as" || fail "the built spirv-as does not know SPV_KHR_cooperative_matrix"
rm -rf "$work"
ln -sfn "$cache/bin" "$link"
echo "spirv-tools: $cache/bin (linked as $link)"
