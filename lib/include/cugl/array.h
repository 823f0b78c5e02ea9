/*
 * cugl/array.h
 */
#ifndef CUGL_ARRAY_H
#define CUGL_ARRAY_H

#include "cugl/error.h"

#endif
