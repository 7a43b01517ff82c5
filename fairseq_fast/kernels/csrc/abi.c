/* abi.c: what the loader checks when it loads a library (kernels/loader.py), compiled into
 * every library: the ABI version of the kernels.h it was built from, and the size of each struct
 * there (which the loader compares with the ctypes structs it builds from the header). */
#include <string.h>

#include "kernels.h"

int ff_abi_version(void) { return FF_ABI_VERSION; }

int64_t ff_struct_size(const char *name) {
  if (!strcmp(name, "dl_linear")) return sizeof(dl_linear);
  if (!strcmp(name, "dl_norm")) return sizeof(dl_norm);
  if (!strcmp(name, "dl_layer")) return sizeof(dl_layer);
  if (!strcmp(name, "gd_decoder")) return sizeof(gd_decoder);
  if (!strcmp(name, "gd_layer_state")) return sizeof(gd_layer_state);
  if (!strcmp(name, "gd_rules")) return sizeof(gd_rules);
  return -1;
}
