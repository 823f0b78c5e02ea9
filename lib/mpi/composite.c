/*
 * composite.c - one composite: read the framebuffer, meet, reduce-scatter,
 * gather, and the root's write.
 *
 * The meeting (a non-blocking MPI_Iallreduce of four ints, waited for
 * with the deadline) comes after each rank's own reading, so that a rank
 * whose GL failed tells the others instead of leaving them in the
 * reduce-scatter; once all have met, the two blocking collectives follow.
 * GL state the calls touch (bindings, pixel store, the blit's scissor,
 * sRGB and discard) is put back as it was.
 */
#include <stdio.h>

#include "mpi_internal.h"


/* The size of the framebuffer's read buffer (a window's: the context's). */
static bool read_buffer_size(cugl_mpi_compositor *c, GLuint fb, int *w, int *h)
{
    if (fb == 0) {
        cugl_app_context_size(c->ctx, w, h);
        return true;
    }
    /* The read buffer as the binding shows it (the framebuffer is bound). */
    GLint read = GL_NONE, type = GL_NONE, name = 0, level = 0;
    glGetIntegerv(GL_READ_BUFFER, &read);
    if (read == GL_NONE)
        return false;
    glGetNamedFramebufferAttachmentParameteriv(fb, (GLenum)read,
                                               GL_FRAMEBUFFER_ATTACHMENT_OBJECT_TYPE, &type);
    glGetNamedFramebufferAttachmentParameteriv(fb, (GLenum)read,
                                               GL_FRAMEBUFFER_ATTACHMENT_OBJECT_NAME, &name);
    if (type == GL_RENDERBUFFER) {
        glGetNamedRenderbufferParameteriv((GLuint)name, GL_RENDERBUFFER_WIDTH, w);
        glGetNamedRenderbufferParameteriv((GLuint)name, GL_RENDERBUFFER_HEIGHT, h);
        return true;
    }
    if (type != GL_TEXTURE)
        return false;
    glGetNamedFramebufferAttachmentParameteriv(fb, (GLenum)read,
                                               GL_FRAMEBUFFER_ATTACHMENT_TEXTURE_LEVEL, &level);
    glGetTextureLevelParameteriv((GLuint)name, level, GL_TEXTURE_WIDTH, w);
    glGetTextureLevelParameteriv((GLuint)name, level, GL_TEXTURE_HEIGHT, h);
    return true;
}

/* Check the framebuffer (bound for reading) and read it; the message into why. */
static cugl_status read_bound(cugl_mpi_compositor *c, GLuint fb, char *why, size_t n)
{
    bool depth = c->mode == CUGL_MPI_COMPOSITE_DEPTH;
    GLenum complete = glCheckNamedFramebufferStatus(fb, GL_READ_FRAMEBUFFER);
    if (complete != GL_FRAMEBUFFER_COMPLETE) {
        snprintf(why, n, "framebuffer %u is not complete (status 0x%x)", fb, complete);
        return CUGL_ERROR_INVALID_ARGUMENT;
    }
    int w = 0, h = 0;
    if (!read_buffer_size(c, fb, &w, &h)) {
        snprintf(why, n, "framebuffer %u has no colour buffer to read", fb);
        return CUGL_ERROR_INVALID_ARGUMENT;
    }
    if (w < c->width || h < c->height) {
        snprintf(why, n, "framebuffer %u is %d x %d, smaller than the compositor's %d x %d", fb,
                 w, h, c->width, c->height);
        return CUGL_ERROR_INVALID_ARGUMENT;
    }
    if (depth) {
        GLint type = GL_NONE;
        glGetNamedFramebufferAttachmentParameteriv(fb, fb ? GL_DEPTH_ATTACHMENT : GL_DEPTH,
                                                   GL_FRAMEBUFFER_ATTACHMENT_OBJECT_TYPE, &type);
        if (type == GL_NONE) {
            snprintf(why, n, "framebuffer %u has no depth buffer, which depth mode needs "
                     "(CUGL_MPI_COMPOSITE_ADD reads colour alone)", fb);
            return CUGL_ERROR_INVALID_ARGUMENT;
        }
    }
    size_t bytes = (size_t)c->width * (size_t)c->height * 4;
    glReadnPixels(0, 0, c->width, c->height, GL_RGBA, GL_UNSIGNED_BYTE, (GLsizei)bytes,
                  c->colour);
    if (depth)
        glReadnPixels(0, 0, c->width, c->height, GL_DEPTH_COMPONENT, GL_UNSIGNED_INT,
                      (GLsizei)bytes, c->depth);
    GLenum err = glGetError();
    if (err != GL_NO_ERROR) {
        snprintf(why, n, "glReadnPixels of framebuffer %u (%d x %d%s): GL error 0x%x", fb,
                 c->width, c->height, depth ? ", colour and depth" : "", err);
        return CUGL_ERROR_GL;
    }
    return CUGL_OK;
}

/* Read this rank's colour (and depth) into host memory; the message into why. */
static cugl_status read_framebuffer(cugl_mpi_compositor *c, GLuint fb, char *why, size_t n)
{
    cugl_app_drain_gl_errors();
    if (fb != 0 && !glIsFramebuffer(fb)) {
        snprintf(why, n, "framebuffer %u is not a framebuffer of this context", fb);
        return CUGL_ERROR_INVALID_ARGUMENT;
    }
    GLint bound = 0;
    glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &bound);
    cugl__gl_pixels saved;
    cugl__gl_pixels_set(&saved, true, 0, 4, 0, 0);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, fb);
    cugl_status st = read_bound(c, fb, why, n);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, (GLuint)bound);
    cugl__gl_pixels_restore(&saved);
    return st;
}

/* The root: the composite into its texture, and blitted into `fb`. */
static cugl_status write_framebuffer(cugl_mpi_compositor *c, GLuint fb, const char *who)
{
    cugl_app_drain_gl_errors();
    cugl__gl_pixels saved;
    cugl__gl_pixels_set(&saved, false, 0, 4, 0, 0);
    glTextureSubImage2D(c->texture, 0, 0, 0, c->width, c->height, GL_RGBA, GL_UNSIGNED_BYTE,
                        c->image);
    cugl__gl_pixels_restore(&saved);
    /* A blit passes the scissor test and sRGB conversion, and none at all
     * under rasterizer discard: all three off for it. */
    const GLenum caps[3] = {GL_SCISSOR_TEST, GL_FRAMEBUFFER_SRGB, GL_RASTERIZER_DISCARD};
    GLboolean was[3];
    for (int i = 0; i < 3; i++) {
        was[i] = glIsEnabled(caps[i]);
        glDisable(caps[i]);
    }
    glBlitNamedFramebuffer(c->fbo, fb, 0, 0, c->width, c->height, 0, 0, c->width, c->height,
                           GL_COLOR_BUFFER_BIT, GL_NEAREST);
    for (int i = 0; i < 3; i++)
        if (was[i])
            glEnable(caps[i]);
    GLenum err = glGetError();
    if (err != GL_NO_ERROR)
        return cugl__fail(CUGL_ERROR_GL, who,
                                 "writing the %d x %d composite into framebuffer %u: GL error "
                                 "0x%x", c->width, c->height, fb, err);
    return CUGL_OK;
}

/* Meet every rank: who failed (the greatest such rank), with what, and the
 * composites' numbers (each rank's, greatest and least). */
static cugl_status meet(cugl_mpi_compositor *c, cugl_status local, const char *who)
{
    cugl__mpi_pending *p = c->meet;
    long frame = c->stats.composites;
    p->send[0] = local != CUGL_OK ? c->rank : -1;
    p->send[1] = (int)local;
    p->send[2] = (int)frame;
    p->send[3] = -(int)frame;
    int err = MPI_Iallreduce(p->send, p->recv, 4, MPI_INT, MPI_MAX, c->comm, &p->request);
    if (err != MPI_SUCCESS)
        return cugl__mpi_fail(CUGL_ERROR_INVALID_STATE, who, err, "MPI_Iallreduce");
    char what[64];
    snprintf(what, sizeof what, "composite %ld", frame);
    cugl_status st = cugl__mpi_wait(&p->request, c->timeout, c->size, who, what);
    if (st == CUGL_ERROR_NOT_READY)
        c->broken = true;
    return st;
}

CUGL_API cugl_status cugl_mpi_compositor_composite(cugl_mpi_compositor *c, uint32_t framebuffer)
{
    if (!c)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "c is NULL");
    if (c->broken)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                                 "an earlier call of this compositor gave up waiting for the "
                                 "ranks and left a collective pending; make a new compositor");
    cugl_status st = cugl__mpi_check_ready(__func__);
    if (st != CUGL_OK)
        return st;

    double t0 = MPI_Wtime();
    char why[512] = "";
    cugl_status local = read_framebuffer(c, framebuffer, why, sizeof why);
    size_t n = (size_t)c->width * (size_t)c->height;
    if (local == CUGL_OK && c->mode == CUGL_MPI_COMPOSITE_DEPTH)
        cugl__mpi_pack_depth(c->send, c->colour, c->depth, n);
    double t1 = MPI_Wtime();

    st = meet(c, local, __func__);
    if (st != CUGL_OK)
        return st;
    int *got = c->meet->recv;
    if (got[0] >= 0) {
        if (local != CUGL_OK)
            return cugl__fail(local, __func__, "%s", why);
        return cugl__fail((cugl_status)got[1], __func__,
                                 "rank %d of %d could not take part (%s; its own message says "
                                 "why): no composite on any rank",
                                 got[0], c->size, cugl_status_name((cugl_status)got[1]));
    }
    if (got[2] != -got[3])
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                                 "the ranks are at different composites (%d to %d) of this "
                                 "compositor",
                                 -got[3], got[2]);

    uint64_t reduced = cugl__mpi_reduced_bytes();
    int err = MPI_Reduce_scatter(c->send, c->piece, c->counts, c->pixel, c->op, c->comm);
    if (err != MPI_SUCCESS)
        return cugl__mpi_fail(CUGL_ERROR_INVALID_STATE, __func__, err, "MPI_Reduce_scatter");
    reduced = cugl__mpi_reduced_bytes() - reduced;
    int mine = c->counts[c->rank];
    if (c->mode == CUGL_MPI_COMPOSITE_DEPTH)
        cugl__mpi_unpack_colour(c->piece, c->piece, (size_t)mine);
    err = MPI_Gatherv(c->piece, mine, MPI_UINT32_T, c->image, c->counts, c->displs,
                      MPI_UINT32_T, c->root, c->comm);
    if (err != MPI_SUCCESS)
        return cugl__mpi_fail(CUGL_ERROR_INVALID_STATE, __func__, err, "MPI_Gatherv");
    double t2 = MPI_Wtime();

    if (c->rank == c->root) {
        c->have_image = true;
        st = write_framebuffer(c, framebuffer, __func__);
    }
    double t3 = MPI_Wtime();

    cugl_mpi_composite_stats *s = &c->stats;
    s->composites++;
    s->seconds = t3 - t0;
    s->readback_seconds = t1 - t0;
    s->mpi_seconds = t2 - t1;
    s->write_seconds = t3 - t2;
    s->image_bytes = (uint64_t)n * c->pixel_bytes;
    s->reduce_bytes = reduced;
    s->gather_bytes = c->rank == c->root ? 0 : (uint64_t)mine * 4;
    s->bytes_sent = s->reduce_bytes + s->gather_bytes;
    return st;
}
