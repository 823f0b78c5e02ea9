/*
 * test_shader.c - shader programs and their failures:
 * compile and link logs in the message, bad arguments, a compute program
 * that runs.
 */
#include <math.h>

#include "gl_test.h"

static const char vertex_ok[] = "#version 450 core\n"
                                "void main() { gl_Position = vec4(0, 0, 0, 1); }\n";
static const char fragment_bad[] = "#version 450 core\n"
                                   "out vec4 color;\n"
                                   "void main() { color = undeclared_thing; }\n";

/* The log GL itself gives, compiled here without the library. */
static char *gl_compile_log(GLenum stage, const char *src)
{
    GLuint s = glCreateShader(stage);
    glShaderSource(s, 1, &src, NULL);
    glCompileShader(s);
    static char log[4096];
    glGetShaderInfoLog(s, sizeof log, NULL, log);
    glDeleteShader(s);
    return log;
}

static void compile_failure_has_the_log(void **state)
{
    (void)state;
    GLuint p = 99;
    assert_status(cugl_app_program(&p, "broken", vertex_ok, fragment_bad), CUGL_ERROR_GL);
    assert_int_equal(p, 0);
    assert_error_mentions("cugl_app_program: program \"broken\": the fragment shader does not "
                          "compile:\n");
    char *log = gl_compile_log(GL_FRAGMENT_SHADER, fragment_bad);
    assert_true(strlen(log) > 0);
    assert_error_mentions(log);
    assert_error_mentions("undeclared_thing");

    assert_status(cugl_app_compute_program(&p, "bad compute", "#version 450 core\nvoid main( {"),
                  CUGL_ERROR_GL);
    assert_error_mentions("cugl_app_compute_program: program \"bad compute\": the compute shader "
                          "does not compile:\n");
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

/* Varyings that disagree in type compile alone and fail to link. */
static void link_failure_has_the_log(void **state)
{
    (void)state;
    static const char vs[] = "#version 450 core\n"
                             "out vec3 v;\n"
                             "void main() { v = vec3(1); gl_Position = vec4(0, 0, 0, 1); }\n";
    static const char fs[] = "#version 450 core\n"
                             "flat in ivec4 v;\n"
                             "out vec4 color;\n"
                             "void main() { color = vec4(v); }\n";
    GLuint p = 99;
    assert_status(cugl_app_program(&p, "mismatch", vs, fs), CUGL_ERROR_GL);
    assert_int_equal(p, 0);
    assert_error_mentions("cugl_app_program: program \"mismatch\" does not link:\n");
    note(cugl_last_error());
    assert_true(strlen(cugl_last_error()) > strlen("cugl_app_program: program \"mismatch\" "
                                                   "does not link:\n"));
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void program_arguments(void **state)
{
    (void)state;
    GLuint p;
    assert_status(cugl_app_program(NULL, "x", vertex_ok, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_program: out is NULL");
    assert_status(cugl_app_program(&p, "x", NULL, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_program: program \"x\": vertex_src is NULL");
    assert_status(cugl_app_compute_program(&p, NULL, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(),
                        "cugl_app_compute_program: program \"(unnamed)\": compute_src is NULL");
}

/* A compute program that works: squares written to a buffer, read back. */
static void compute_program_runs(void **state)
{
    (void)state;
    static const char cs[] = "#version 450 core\n"
                             "layout(local_size_x = 64) in;\n"
                             "layout(std430, binding = 0) buffer Out { uint v[]; };\n"
                             "void main() { uint i = gl_GlobalInvocationID.x; v[i] = i * i; }\n";
    GLuint p = 0, buf;
    assert_ok(cugl_app_compute_program(&p, "squares", cs));
    assert_int_not_equal(p, 0);
    glCreateBuffers(1, &buf);
    glNamedBufferStorage(buf, 256 * sizeof(GLuint), NULL, 0);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, buf);
    glUseProgram(p);
    glDispatchCompute(4, 1, 1);
    glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
    GLuint v[256];
    glGetNamedBufferSubData(buf, 0, sizeof v, v);
    for (GLuint i = 0; i < 256; i++)
        assert_int_equal(v[i], i * i);
    glUseProgram(0);
    glDeleteBuffers(1, &buf);
    glDeleteProgram(p);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compile_failure_has_the_log),
        cmocka_unit_test(link_failure_has_the_log),
        cmocka_unit_test(program_arguments),
        cmocka_unit_test(compute_program_runs),
    };
    return gl_test_run(tests, "cugl-shader");
}
