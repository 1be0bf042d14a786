/* glibc's mallinfo2() (bytes of heap in use), which Swift's Glibc module leaves out: for the
 * benchmark's memory figures. Nothing on other platforms. */
#if defined(__linux__)
#include <malloc.h>
#endif
