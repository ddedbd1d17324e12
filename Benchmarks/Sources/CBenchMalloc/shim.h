// glibc's allocator statistics (mallinfo2), for benchmarks that report heap bytes in use;
// Swift's Glibc module leaves malloc.h out.
#include <malloc.h>
