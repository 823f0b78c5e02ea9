/*
 * cugl/texture.h
 */
#ifndef CUGL_TEXTURE_H
#define CUGL_TEXTURE_H

#include "cugl/error.h"

#endif
