// CGS_HD marks a function written once for the host and the device: compiled by nvcc it is a
// __host__ __device__ function forced inline (a device call of a small decision costs more than
// the decision), compiled by the host compiler a plain inline function.
#pragma once

#if defined(__CUDACC__)
#define CGS_HD __host__ __device__ __forceinline__
#else
#define CGS_HD inline
#endif
