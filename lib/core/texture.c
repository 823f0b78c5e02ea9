/*
 * texture.c
 */
#include "internal.h"
