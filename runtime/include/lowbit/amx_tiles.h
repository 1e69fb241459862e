/*===- amx_tiles.h - the AMX-INT8 operations of the x86-amx kernels -------===*\
|*                                                                          *|
|* The few tile operations the generated x86-amx kernels call, as inline    *|
|* C++ wrappers: with LOWBIT_AMX_EMULATE defined, the emulation of the      *|
|* instructions below (plain C++, lowbit_amx_emu_*; so that the kernels are *|
|* tested on hosts without AMX); otherwise the <immintrin.h> intrinsics     *|
|* (-mamx-tile -mamx-int8). Tile numbers are template arguments, because the *|
|* intrinsics take them as immediates. The x86-amx TargetInfo embeds this   *|
|* file's text at the top of every kernel it emits (the generated C++       *|
|* includes nothing of the runtime), so it is self-contained.               *|
|*                                                                          *|
\*===----------------------------------------------------------------------===*/
/*
 * SEMANTICS (Intel 64 and IA-32 Architectures Software Developer's Manual,
 * Vol. 2: LDTILECFG, TILELOADD, TILESTORED, TILEZERO, TDPBSSD / TDPBSUD /
 * TDPBUSD / TDPBUUD, TILERELEASE; palette 1)
 *   8 tiles tmm0..tmm7 of up to 16 rows x 64 bytes. The 64-byte tile
 *   configuration: byte 0 palette (1), byte 1 start_row (0), bytes 16..47
 *   colsb[t] (uint16, bytes per row of tile t), bytes 48..63 rows[t].
 *   TILELOADD t, [base + stride]: row r < rows[t] is the colsb[t] bytes at
 *     base + r * stride; bytes past colsb and rows past rows are zero.
 *   TILESTORED: writes rows[t] rows of colsb[t] bytes, row r at base +
 *     r * stride.
 *   TILEZERO: every byte of the tile zero.
 *   TDPB<x><y>D c, a, b (x: signedness of a's bytes, y: of b's; S signed,
 *     U unsigned): for m < rows[c], n < colsb[c] / 4, k < colsb[a] / 4:
 *       c[m].dword[n] += a[m].byte[4k + i] * b[k].byte[4n + i], i = 0..3,
 *     in int32 with wraparound; c's bytes past colsb and rows past rows
 *     are zeroed.
 *   Faults the emulation reproduces (it prints the rule and aborts, so that
 *   a kernel the hardware would stop is stopped here too): LDTILECFG #GP on
 *   a palette other than 1, nonzero reserved bytes or start_row, rows > 16,
 *   colsb > 64, or a tile with exactly one of rows and colsb zero; #UD on a
 *   tile operation before LDTILECFG or on a tile it left unconfigured; TDPB*
 *   #UD unless c, a and b are distinct, rows[a] == rows[c], colsb[a] / 4 ==
 *   rows[b] and colsb[b] == colsb[c].
 * The kernels configure the tiles (lowbit_amx_config<k>: products of k
 * bytes, see lowbit_amx_full_config) in their prologue and release them
 * (lowbit_amx_release) before they return: the configuration is per
 * thread, and a kernel runs start to end on one thread.
 */
#ifndef LOWBIT_AMX_TILES_H
#define LOWBIT_AMX_TILES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every function here: a kernel's text carries all of them and calls a few
 * (no unused-function warnings). */
#define LOWBIT_AMX_FN static inline __attribute__((unused))

/* The 64-byte LDTILECFG operand, palette 1. */
struct lowbit_amx_tilecfg {
  uint8_t palette;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

/* Tiles 0..3 (accumulators) 16 rows x 64 bytes, 4 and 5 (activations) 16
 * rows x k bytes, 6 and 7 (codes) k / 4 rows x 64 bytes: tile products of
 * k k (k = 64: every tile 16 x 64). */
LOWBIT_AMX_FN struct lowbit_amx_tilecfg lowbit_amx_full_config(int k = 64) {
  struct lowbit_amx_tilecfg cfg;
  memset(&cfg, 0, sizeof(cfg));
  cfg.palette = 1;
  for (int t = 0; t < 8; ++t) {
    cfg.colsb[t] = t == 4 || t == 5 ? k : 64;
    cfg.rows[t] = t >= 6 ? k / 4 : 16;
  }
  return cfg;
}

/* The emulation (always defined: plain C++; lowbit bench's AMX peak loop
 * checks its result with it on hosts without AMX). */

/* The architectural state the emulation keeps per thread. */
struct lowbit_amx_state {
  struct lowbit_amx_tilecfg cfg;
  uint8_t tile[8][16][64];
};

LOWBIT_AMX_FN struct lowbit_amx_state &lowbit_amx_emu_state() {
  static thread_local struct lowbit_amx_state state;
  return state;
}

/* A fault of the instruction `insn` (see SEMANTICS): the rule it broke. */
LOWBIT_AMX_FN void lowbit_amx_emu_fault(bool broken, const char *insn,
                                        const char *rule) {
  if (!broken)
    return;
  fprintf(stderr, "lowbit: AMX emulation: %s faults: %s\n", insn, rule);
  abort();
}

/* #UD of a tile operation on tile t before LDTILECFG or unconfigured. */
LOWBIT_AMX_FN void lowbit_amx_emu_check_tile(int t, const char *insn) {
  const struct lowbit_amx_tilecfg &c = lowbit_amx_emu_state().cfg;
  lowbit_amx_emu_fault(c.palette != 1, insn, "tiles not configured");
  lowbit_amx_emu_fault(t < 0 || t > 7 || c.rows[t] == 0, insn,
                       "tile not configured");
}

/* LDTILECFG: the configuration, every tile zeroed. */
LOWBIT_AMX_FN void
lowbit_amx_emu_ldtilecfg(const struct lowbit_amx_tilecfg *c) {
  const char *insn = "LDTILECFG";
  lowbit_amx_emu_fault(c->palette != 1, insn, "palette other than 1");
  lowbit_amx_emu_fault(c->start_row != 0, insn, "start_row not 0");
  for (int i = 0; i < 14; ++i)
    lowbit_amx_emu_fault(c->reserved[i] != 0, insn, "reserved byte set");
  for (int t = 0; t < 16; ++t) {
    lowbit_amx_emu_fault(t >= 8 && (c->rows[t] || c->colsb[t]), insn,
                         "a tile past palette 1's 8");
    lowbit_amx_emu_fault(c->rows[t] > 16 || c->colsb[t] > 64, insn,
                         "more than 16 rows or 64 bytes a row");
    lowbit_amx_emu_fault((c->rows[t] == 0) != (c->colsb[t] == 0), insn,
                         "one of rows and colsb zero");
  }
  struct lowbit_amx_state &s = lowbit_amx_emu_state();
  s.cfg = *c;
  memset(s.tile, 0, sizeof(s.tile));
}

/* TILERELEASE: back to the initial (unconfigured, zero) state. */
LOWBIT_AMX_FN void lowbit_amx_emu_release() {
  memset(&lowbit_amx_emu_state(), 0, sizeof(struct lowbit_amx_state));
}

LOWBIT_AMX_FN void lowbit_amx_emu_zero(int t) {
  lowbit_amx_emu_check_tile(t, "TILEZERO");
  memset(lowbit_amx_emu_state().tile[t], 0, 16 * 64);
}

LOWBIT_AMX_FN void lowbit_amx_emu_load(int t, const void *base,
                                       ptrdiff_t stride) {
  lowbit_amx_emu_check_tile(t, "TILELOADD");
  struct lowbit_amx_state &s = lowbit_amx_emu_state();
  memset(s.tile[t], 0, 16 * 64);
  for (int r = 0; r < s.cfg.rows[t]; ++r)
    memcpy(s.tile[t][r], (const uint8_t *)base + r * stride, s.cfg.colsb[t]);
}

LOWBIT_AMX_FN void lowbit_amx_emu_store(int t, void *base, ptrdiff_t stride) {
  lowbit_amx_emu_check_tile(t, "TILESTORED");
  struct lowbit_amx_state &s = lowbit_amx_emu_state();
  for (int r = 0; r < s.cfg.rows[t]; ++r)
    memcpy((uint8_t *)base + r * stride, s.tile[t][r], s.cfg.colsb[t]);
}

/* TDPB<x><y>D c, a, b: `a_signed`, `b_signed` choose the extension of a's
 * and b's bytes. */
LOWBIT_AMX_FN void lowbit_amx_emu_dot(int c, int a, int b, int a_signed,
                                      int b_signed) {
  const char *insn = "TDPB*D";
  lowbit_amx_emu_check_tile(c, insn);
  lowbit_amx_emu_check_tile(a, insn);
  lowbit_amx_emu_check_tile(b, insn);
  struct lowbit_amx_state &s = lowbit_amx_emu_state();
  lowbit_amx_emu_fault(c == a || c == b || a == b, insn, "a tile used twice");
  lowbit_amx_emu_fault(s.cfg.rows[a] != s.cfg.rows[c], insn,
                       "rows[a] != rows[c]");
  lowbit_amx_emu_fault(s.cfg.colsb[a] / 4 != s.cfg.rows[b], insn,
                       "colsb[a] / 4 != rows[b]");
  lowbit_amx_emu_fault(s.cfg.colsb[b] != s.cfg.colsb[c], insn,
                       "colsb[b] != colsb[c]");
  const int rows = s.cfg.rows[c], cols = s.cfg.colsb[c] / 4,
            depth = s.cfg.colsb[a] / 4;
  for (int m = 0; m < rows; ++m)
    for (int n = 0; n < cols; ++n) {
      uint32_t acc;
      memcpy(&acc, &s.tile[c][m][4 * n], 4);
      for (int k = 0; k < depth; ++k)
        for (int i = 0; i < 4; ++i) {
          uint8_t x = s.tile[a][m][4 * k + i], w = s.tile[b][k][4 * n + i];
          int32_t xv = a_signed ? (int32_t)(int8_t)x : (int32_t)x;
          int32_t wv = b_signed ? (int32_t)(int8_t)w : (int32_t)w;
          acc += (uint32_t)(xv * wv); /* |xv * wv| <= 2^16: no overflow */
        }
      memcpy(&s.tile[c][m][4 * n], &acc, 4);
    }
  for (int m = 0; m < 16; ++m)
    memset(&s.tile[c][m][m < rows ? 4 * cols : 0], 0,
           m < rows ? 64 - 4 * cols : 64);
}

#ifdef LOWBIT_AMX_EMULATE

template <int K> LOWBIT_AMX_FN void lowbit_amx_config() {
  struct lowbit_amx_tilecfg cfg = lowbit_amx_full_config(K);
  lowbit_amx_emu_ldtilecfg(&cfg);
}
LOWBIT_AMX_FN void lowbit_amx_release() { lowbit_amx_emu_release(); }
template <int T> LOWBIT_AMX_FN void lowbit_amx_zero() {
  lowbit_amx_emu_zero(T);
}
template <int T>
LOWBIT_AMX_FN void lowbit_amx_load(const void *base, ptrdiff_t stride) {
  lowbit_amx_emu_load(T, base, stride);
}
template <int T>
LOWBIT_AMX_FN void lowbit_amx_store(void *base, ptrdiff_t stride) {
  lowbit_amx_emu_store(T, base, stride);
}
/* TDPBSUD: signed a (activations) times unsigned b (codes). */
template <int C, int A, int B> LOWBIT_AMX_FN void lowbit_amx_dot_su() {
  lowbit_amx_emu_dot(C, A, B, 1, 0);
}

#else /* native AMX */

#include <immintrin.h>

template <int K> LOWBIT_AMX_FN void lowbit_amx_config() {
  struct lowbit_amx_tilecfg cfg = lowbit_amx_full_config(K);
  _tile_loadconfig(&cfg);
}
LOWBIT_AMX_FN void lowbit_amx_release() { _tile_release(); }
template <int T> LOWBIT_AMX_FN void lowbit_amx_zero() { _tile_zero(T); }
template <int T>
LOWBIT_AMX_FN void lowbit_amx_load(const void *base, ptrdiff_t stride) {
  _tile_loadd(T, base, stride);
}
template <int T>
LOWBIT_AMX_FN void lowbit_amx_store(void *base, ptrdiff_t stride) {
  _tile_stored(T, base, stride);
}
template <int C, int A, int B> LOWBIT_AMX_FN void lowbit_amx_dot_su() {
  _tile_dpbsud(C, A, B);
}

#endif /* LOWBIT_AMX_EMULATE */

#endif /* LOWBIT_AMX_TILES_H */
