/*
 * fatbin.c - the kernels' fatbin inside the program: nvcc -fatbin wave.cu
 * makes the file, and the assembler's .incbin puts its bytes here, between
 * the symbols wave_fatbin and wave_fatbin_end (any other way of making a C
 * array of a file's bytes does as well). WAVE_FATBIN is the file's path.
 */
#ifndef WAVE_FATBIN
#error "build with -DWAVE_FATBIN='\"path/to/wave.fatbin\"'"
#endif

extern const unsigned char wave_fatbin[], wave_fatbin_end[];

__asm__(".section .rodata\n"
        ".balign 16\n"
        ".global wave_fatbin\n"
        "wave_fatbin:\n"
        ".incbin \"" WAVE_FATBIN "\"\n"
        ".global wave_fatbin_end\n"
        "wave_fatbin_end:\n"
        ".previous\n");
