"""Drawing: what _finish calls to draw the picture, as functions of a
viewer's _Resources alone (a closure over the viewer would hold it in a
cycle through its last picture). A drawer marked `covers` writes every
pixel of the viewport, and _finish then skips the clear."""
from ctypes import byref, c_float, c_int, c_uint32

from .. import _app_lib
from .. import _gl
from .._app_structs import AppColorbarDesc

def _nothing():
    pass


def _covering(draw):
    """`draw`, marked as writing every pixel of the viewport (a triangle over
    it, no blending, no discard): _finish then skips the clear."""
    draw.covers = True
    return draw


# cugl_app_origin: where an image's row 0 is drawn.
_ORIGIN = {"lower": 0, "upper": 1}


def _image_drawer(res, origin):
    code = _ORIGIN[origin]

    def draw():
        _app_lib.load().cugl_app_target_draw_origin(res.targets["image"].ptr, code)
    return _covering(draw)


def _points_drawer(res, count, components, matrix, size, rgba):
    def draw():
        _app_lib.load().cugl_app_target_draw_points(res.targets["points"].ptr, count,
                                                    components, matrix, size, rgba)
    return draw


def _mesh_drawer(res, desc, roles, call, vertices, count, arg, matrix, overlays=None):
    """A drawer of cugl/app_draw.h: `call(app, desc, vertices, count, arg,
    matrix)`, desc's targets those of `roles` (desc's field: the viewer's
    target role) as they are when drawn; then `overlays(app)`, if any."""
    def draw():
        app = _app_lib.load()
        if count:
            for field, role in roles.items():
                setattr(desc, field, res.targets[role].ptr)
            call(app, byref(desc), vertices, count, arg, matrix)
        if overlays is not None:
            overlays(app)
    return draw if count or overlays is not None else _nothing


def _volume_drawer(res, desc, matrix, overlays):
    """cugl_app_draw_volume of `desc`, its target the viewer's "volume" as
    it is when drawn; then `overlays(app)`, if any."""
    def draw():
        app = _app_lib.load()
        desc.volume = res.targets["volume"].ptr
        app.cugl_app_draw_volume(byref(desc), matrix)
        if overlays is not None:
            overlays(app)
    return draw


# Overlays' places and sizes (pixels): the colorbar's width and its room at
# the right for its labels, the margin, the title's size.
_BAR_WIDTH, _BAR_ROOM, _MARGIN, _TITLE_PIXELS = 16, 64, 12, 18


def _overlays(res, colorbar, title, colormap, vmin, vmax):
    """What mesh(), lines() and points() draw over the picture: a colorbar
    of their colour map at the right, a title at the top left; None where
    neither."""
    if not colorbar and not title:
        return None
    white = (c_float * 4)(1.0, 1.0, 1.0, 1.0)
    text = title.encode("utf-8", "replace") if title else None

    def draw(app):
        w, h = c_int(), c_int()
        app.cugl_app_context_size(res.ctx, byref(w), byref(h))
        if colorbar and w.value > _BAR_WIDTH + _BAR_ROOM and h.value >= 60:
            bar = AppColorbarDesc(colormap=colormap, vmin=vmin, vmax=vmax,
                                  x=w.value - _BAR_WIDTH - _BAR_ROOM, y=h.value // 6,
                                  width=_BAR_WIDTH, height=h.value * 2 // 3)
            app.cugl_app_draw_colorbar(res.ctx, byref(bar))
        if text and h.value > _TITLE_PIXELS + _MARGIN:
            app.cugl_app_draw_text(res.ctx, text, _MARGIN, h.value - _MARGIN - _TITLE_PIXELS,
                                   _TITLE_PIXELS, white)
    return draw


def _frame_drawer(res, mapped, width, height):
    app = _app_lib.load()
    if not mapped:
        def draw():
            app.cugl_app_target_draw(res.targets["frame"].ptr)
        return _covering(draw)

    def draw_buffer():
        # The map path's frame is a buffer: blitted from GL's buffer itself.
        t = res.targets["frame"].ptr
        app.cugl_app_target_gl_begin(t)
        try:
            app.cugl_app_blit_rgba8_buffer(res.ctx, app.cugl_app_target_gl_name(t), width,
                                           height, width * 4)
        finally:
            app.cugl_app_target_gl_end(t)
    return _covering(draw_buffer)


def _program(res):
    """The viewer's GL program (cugl/_gl.py), made at its first use."""
    if not res.program:
        out = c_uint32()
        _app_lib.load().cugl_app_program(byref(out), b"cugl-viewer", _gl.VERTEX, _gl.FRAGMENT)
        res.program = out.value
        res.vao = res.gl.vertex_array()
        res.uniforms = {name: res.gl.glGetUniformLocation(res.program, name.encode())
                        for name in _gl.UNIFORMS}
    return res.program


def _program_drawer(res, uniforms, words):
    width, height, channels, dtype, lo, scale, row0_up = uniforms

    def draw():
        app, gl = _app_lib.load(), res.gl
        program = _program(res)
        if words is not None and words != res.lut_words:
            if not res.lut:
                res.lut = gl.buffer(words, len(words))
            else:
                gl.glNamedBufferSubData(res.lut, 0, len(words), words)
            res.lut_words = words
        t = res.targets["program"].ptr
        vw, vh = c_int(), c_int()
        app.cugl_app_context_size(res.ctx, byref(vw), byref(vh))
        app.cugl_app_drain_gl_errors()
        app.cugl_app_target_gl_begin(t)
        try:
            u = res.uniforms
            gl.glUseProgram(program)
            gl.glUniform4i(u["u_viewport"], 0, 0, vw.value, vh.value)
            gl.glUniform2i(u["u_size"], width, height)
            gl.glUniform1i(u["u_channels"], channels)
            gl.glUniform1i(u["u_type"], dtype)
            gl.glUniform1f(u["u_lo"], lo)
            gl.glUniform1f(u["u_scale"], scale)
            gl.glUniform1i(u["u_row0_up"], int(row0_up))
            gl.glBindBufferBase(_gl.GL_SHADER_STORAGE_BUFFER, 0, app.cugl_app_target_gl_name(t))
            if res.lut:
                gl.glBindBufferBase(_gl.GL_SHADER_STORAGE_BUFFER, 1, res.lut)
            gl.glBindVertexArray(res.vao)
            gl.glDrawArrays(_gl.GL_TRIANGLES, 0, 3)
            gl.glBindVertexArray(0)
            gl.glUseProgram(0)
            app.cugl_app_check_gl(b"Viewer.show", b"drawing through the viewer's program")
        finally:
            app.cugl_app_target_gl_end(t)
    return _covering(draw)
