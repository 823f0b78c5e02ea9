/*
 * array.c
 */
#include "internal.h"
