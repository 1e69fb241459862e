//===- amx_emulation_test.cpp - the AMX-INT8 emulation of amx_tiles.h -----===//
//
// The emulation against values worked out by hand from the Intel SDM's
// definitions (Vol. 2, TDPBSSD/TDPBSUD/TDPBUSD/TDPBUUD, TILELOADD,
// TILESTORED): small tile shapes, every signedness, int32 wraparound, the
// zeroing of bytes past a tile's configured rows and columns.
//
//===----------------------------------------------------------------------===//

#define LOWBIT_AMX_EMULATE
#include "lowbit/amx_tiles.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <vector>

namespace {

/// Tiles 0 (C), 1 (A), 2 (B), each 2 rows x 8 bytes.
lowbit_amx_tilecfg smallConfig() {
  lowbit_amx_tilecfg cfg;
  std::memset(&cfg, 0, sizeof(cfg));
  cfg.palette = 1;
  for (int t = 0; t < 3; ++t) {
    cfg.rows[t] = 2;
    cfg.colsb[t] = 8;
  }
  return cfg;
}

// A (signed view): row 0 = 1 2 3 4 | -1 0 0 5, row 1 = -128 0 0 0 | 0 0 0 0.
// B: row 0 (k 0..3) = 1 1 1 1 | 2 0 0 0, row 1 (k 4..7) = 0 0 0 1 | 0xFF 0 0 0.
// Rows are 16 bytes apart in memory (stride 16), the 8 bytes past each row
// 0x77 (not loaded).
const uint8_t kA[2][16] = {
    {1, 2, 3, 4, 0xFF, 0, 0, 5, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77},
    {0x80, 0, 0, 0, 0, 0, 0, 0, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77,
     0x77}};
const uint8_t kB[2][16] = {
    {1, 1, 1, 1, 2, 0, 0, 0, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77},
    {0, 0, 0, 1, 0xFF, 0, 0, 0, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77,
     0x77}};

/// Loads A and B, zeroes C, runs one product of the given signedness and
/// returns C (2 x 2 int32).
std::vector<int32_t> product(int aSigned, int bSigned) {
  lowbit_amx_tilecfg cfg = smallConfig();
  lowbit_amx_emu_ldtilecfg(&cfg);
  lowbit_amx_emu_zero(0);
  lowbit_amx_emu_load(1, kA, 16);
  lowbit_amx_emu_load(2, kB, 16);
  lowbit_amx_emu_dot(0, 1, 2, aSigned, bSigned);
  std::vector<int32_t> c(4);
  lowbit_amx_emu_store(0, c.data(), 8);
  lowbit_amx_emu_release();
  return c;
}

// C[m][n] = sum_k sum_i A[m][4k + i] * B[k][4n + i]:
//   C[0][0] = (1 + 2 + 3 + 4) + (a * 0 + 0 + 0 + 5 * 1) = 15 (a = A[0][4])
//   C[0][1] = 1 * 2 + a * b                       (b = B[1][4])
//   C[1][0] = A[1][0] * 1,  C[1][1] = A[1][0] * 2
TEST(AmxEmulation, SignedTimesUnsigned) { // TDPBSUD: a = -1, b = 255
  EXPECT_EQ(product(1, 0), (std::vector<int32_t>{15, 2 - 255, -128, -256}));
}
TEST(AmxEmulation, SignedTimesSigned) { // TDPBSSD: a = -1, b = -1
  EXPECT_EQ(product(1, 1), (std::vector<int32_t>{15, 3, -128, -256}));
}
TEST(AmxEmulation, UnsignedTimesSigned) { // TDPBUSD: a = 255, b = -1
  EXPECT_EQ(product(0, 1), (std::vector<int32_t>{15, 2 - 255, 128, 256}));
}
TEST(AmxEmulation, UnsignedTimesUnsigned) { // TDPBUUD: a = 255, b = 255
  EXPECT_EQ(product(0, 0), (std::vector<int32_t>{15, 2 + 255 * 255, 128, 256}));
}

TEST(AmxEmulation, AccumulatesWithWraparound) {
  lowbit_amx_tilecfg cfg = smallConfig();
  lowbit_amx_emu_ldtilecfg(&cfg);
  const int32_t start[4] = {INT32_MAX, -1, 7, INT32_MIN};
  lowbit_amx_emu_load(0, start, 8);
  lowbit_amx_emu_load(1, kA, 16);
  lowbit_amx_emu_load(2, kB, 16);
  lowbit_amx_emu_dot(0, 1, 2, 1, 0);
  int32_t c[4];
  lowbit_amx_emu_store(0, c, 8);
  // INT32_MAX + 15 wraps to INT32_MIN + 14; INT32_MIN - 256 to
  // INT32_MAX - 255.
  EXPECT_EQ(c[0], INT32_MIN + 14);
  EXPECT_EQ(c[1], -1 + 2 - 255);
  EXPECT_EQ(c[2], 7 - 128);
  EXPECT_EQ(c[3], INT32_MAX - 255);
  lowbit_amx_emu_release();
}

TEST(AmxEmulation, LoadZeroesPastRowsAndColumnsStoreWritesOnlyThem) {
  lowbit_amx_tilecfg cfg = smallConfig();
  lowbit_amx_emu_ldtilecfg(&cfg);
  lowbit_amx_emu_load(1, kA, 16);
  const lowbit_amx_state &s = lowbit_amx_emu_state();
  EXPECT_EQ(s.tile[1][0][7], 5);
  EXPECT_EQ(s.tile[1][0][8], 0); // past colsb: zero, not 0x77
  EXPECT_EQ(s.tile[1][2][0], 0); // past rows
  // Store with stride 12: rows at 0 and 12, 8 bytes each; the rest of
  // the buffer keeps its 0xEE.
  uint8_t out[24];
  std::memset(out, 0xEE, sizeof(out));
  lowbit_amx_emu_store(1, out, 12);
  const uint8_t want[24] = {1,    2,    3,    4,    0xFF, 0,    0,    5,
                            0xEE, 0xEE, 0xEE, 0xEE, 0x80, 0,    0,    0,
                            0,    0,    0,    0,    0xEE, 0xEE, 0xEE, 0xEE};
  EXPECT_EQ(std::memcmp(out, want, 24), 0);
  lowbit_amx_emu_release();
}

// The kernels' wrappers: every tile 16 x 64; A all -1 (signed), B all 2
// (unsigned): each C entry is 64 products of -2, -128, twice over for two
// products; tile 3 zeroed stays 0.
TEST(AmxEmulation, WrappersFullTiles) {
  lowbit_amx_config<64>();
  std::vector<int8_t> a(16 * 64, -1);
  std::vector<uint8_t> b(16 * 64, 2);
  lowbit_amx_zero<0>();
  lowbit_amx_zero<3>();
  lowbit_amx_load<4>(a.data(), 64);
  lowbit_amx_load<6>(b.data(), 64);
  lowbit_amx_dot_su<0, 4, 6>();
  lowbit_amx_dot_su<0, 4, 6>();
  std::vector<int32_t> c(16 * 16, 1), z(16 * 16, 1);
  lowbit_amx_store<0>(c.data(), 64);
  lowbit_amx_store<3>(z.data(), 64);
  lowbit_amx_release();
  for (int32_t v : c)
    EXPECT_EQ(v, -256);
  for (int32_t v : z)
    EXPECT_EQ(v, 0);
}

// Products of 32 k (lowbit_amx_config<32>: activations 16 x 32 bytes,
// codes 8 rows): loads read only 32 bytes of each activation row and 8
// code rows, so the bytes past them (7, in memory) take no part: each C
// entry is 32 products of 3 x 2 = 192.
TEST(AmxEmulation, WrappersProductsOf32) {
  lowbit_amx_config<32>();
  std::vector<int8_t> a(16 * 64, 7);
  std::vector<uint8_t> b(16 * 64, 7);
  for (int r = 0; r < 16; ++r)
    std::memset(&a[r * 64], 3, 32);
  std::memset(b.data(), 2, 8 * 64);
  lowbit_amx_zero<1>();
  lowbit_amx_load<5>(a.data(), 64);
  lowbit_amx_load<7>(b.data(), 64);
  lowbit_amx_dot_su<1, 5, 7>();
  std::vector<int32_t> c(16 * 16, 1);
  lowbit_amx_store<1>(c.data(), 64);
  lowbit_amx_release();
  for (int32_t v : c)
    EXPECT_EQ(v, 192);
}

// Where the hardware faults, the emulation stops too (SDM: LDTILECFG #GP,
// TDPB*D and TILELOADD #UD), so that a kernel it accepts runs natively.
TEST(AmxEmulationDeathTest, FaultsWhereTheHardwareDoes) {
  lowbit_amx_emu_release();
  EXPECT_DEATH(lowbit_amx_emu_load(1, kA, 16), "tiles not configured");
  lowbit_amx_tilecfg cfg = smallConfig();
  cfg.rows[2] = 3; // B's rows != A's colsb / 4
  EXPECT_DEATH(
      {
        lowbit_amx_emu_ldtilecfg(&cfg);
        lowbit_amx_emu_dot(0, 1, 2, 1, 0);
      },
      "colsb\\[a\\] / 4 != rows\\[b\\]");
  cfg = smallConfig();
  EXPECT_DEATH(
      {
        lowbit_amx_emu_ldtilecfg(&cfg);
        lowbit_amx_emu_dot(0, 1, 1, 1, 0);
      },
      "a tile used twice");
  cfg = smallConfig();
  EXPECT_DEATH(
      {
        lowbit_amx_emu_ldtilecfg(&cfg);
        lowbit_amx_emu_zero(3);
      },
      "tile not configured");
  cfg.colsb[4] = 4; // rows[4] stays 0
  EXPECT_DEATH(lowbit_amx_emu_ldtilecfg(&cfg), "one of rows and colsb zero");
  cfg = smallConfig();
  cfg.rows[0] = 17;
  EXPECT_DEATH(lowbit_amx_emu_ldtilecfg(&cfg), "more than 16 rows");
}

} // namespace
