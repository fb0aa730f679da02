// Device helpers every GEMM kernel shares (gemm_mma.cuh, gemm_tf32.cu, gemm_wgmma.cuh): the
// grouped order in which tiles are visited and the epilogue's bounds-checked store of a pair.
#pragma once

#include <cstdint>

#include "kernels/gemm/gemm_tiles.hpp"

namespace kbench::gemm {

struct TileCoord {
  int m, n;  // the tile's row and column in the grid of tiles
};

// Tile `pid` of a grid_m x grid_n grid in grouped order: kGroupM rows of tiles, column by column,
// then the next kGroupM rows, so that the tiles in flight together share A's row panels and B's
// column panels in L2.
__device__ __forceinline__ TileCoord grouped_tile(int pid, int grid_m, int grid_n) {
  const int per_group = kGroupM * grid_n;
  const int first_m = (pid / per_group) * kGroupM;
  const int group_rows = min(grid_m - first_m, kGroupM);
  return TileCoord{first_m + (pid % per_group) % group_rows, (pid % per_group) / group_rows};
}

// Stores x (and y at offset + 1 when `both`) to c; `paired` when offset is even and C aligned
// to a pair (4 bytes of 16-bit elements, 8 of float32), so that the pair goes as one store.
template <class T>
__device__ __forceinline__ void store_pair(T* c, std::int64_t offset, float x, float y, bool both, bool paired) {
  if (paired) {
    if constexpr (sizeof(T) == 2) {
      T pair[2] = {T(x), T(y)};
      *reinterpret_cast<std::uint32_t*>(c + offset) = *reinterpret_cast<std::uint32_t*>(pair);
    } else {
      *reinterpret_cast<float2*>(c + offset) = make_float2(x, y);
    }
  } else {
    c[offset] = T(x);
    if (both) c[offset + 1] = T(y);
  }
}

}  // namespace kbench::gemm
