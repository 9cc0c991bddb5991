// CGS_HD marks a function written once for the host and the device: compiled by nvcc it is a
// __host__ __device__ function forced inline (a device call of a small decision costs more than
// the decision), compiled by the host compiler a plain inline function.
#pragma once

#if defined(__CUDACC__)
#define CGS_HD __host__ __device__ __forceinline__
#else
#define CGS_HD inline
#endif

// CGS_HD_INLINE: the same, forced inline on the host too, for a function that a loop calls per
// element where the host compiler's size limits would leave a call (network/gga_coeffs.hpp's
// link_coefficients: a call per link cost 10% of a trial's assembly).
#if defined(__CUDACC__)
#define CGS_HD_INLINE __host__ __device__ __forceinline__
#else
#define CGS_HD_INLINE inline __attribute__((always_inline))
#endif
