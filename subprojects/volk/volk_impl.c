/* Compiles volk.c with every public volk symbol renamed (see meson.build). */
#include "volk_rename.h"
#include "volk.c"
