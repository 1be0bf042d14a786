// The same checks as header_check.c, compiled as C++ (C++11 and C++17).
#include "header_check.c"
