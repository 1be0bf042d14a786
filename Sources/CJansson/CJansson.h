/* The Jansson system library, as a Swift module for the C API layer and the benchmark. */
#include <jansson.h>
