/**
 * @file cugl/cugl.h
 * The whole public API of libcugl.
 */
#ifndef CUGL_CUGL_H
#define CUGL_CUGL_H

#include "cugl/base.h"
#include "cugl/error.h"
#include "cugl/device.h"
#include "cugl/stream.h"
#include "cugl/event.h"
#include "cugl/module.h"
#include "cugl/memory.h"
#include "cugl/buffer.h"
#include "cugl/array.h"
#include "cugl/texture.h"
#include "cugl/layout.h"
#include "cugl/view.h"
#include "cugl/graphics.h"

#endif /* CUGL_CUGL_H */
