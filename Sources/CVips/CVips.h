#ifndef CVIPS_H
#define CVIPS_H
#include <vips/vips.h>
#endif
