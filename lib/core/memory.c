/*
 * memory.c
 */
#include "internal.h"
