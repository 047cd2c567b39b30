#include <_lz_base.h>
