/*
 * buffer.c
 */
#include "internal.h"
