"""Serving: the frames sent to web browsers (cugl/app_serve.h, where
libcugl-app was built with the Meson feature `serve`), whose mouse and keys
come back as events."""
from ctypes import byref, c_void_p

from .. import _app_lib
from .. import _errors
from .._app_structs import AppServerDesc


class _Serving:
    """Viewer's serve(), url and set_stats."""

    def serve(self, port=0, *, address=None, token=None, quality=0):
        """Serve the frames to web browsers (cugl/app_serve.h) from the next
        present on, on 127.0.0.1 (or `address`) at `port` (0: any free
        one); their mouse and keys come back as events. Prints and returns
        the page's URL (already serving: returns it)."""
        self._enter("serve", turn_ok=True)
        res = self._res
        if res.server is not None:
            return self.url
        if not _app_lib.has("serve"):
            raise _errors.NotSupportedError(
                "Viewer.serve: this libcugl-app was built without the frame server (Meson "
                "feature `serve`: Debian's libwebsockets-dev and libturbojpeg0-dev)")
        desc = AppServerDesc(address=address.encode() if address else None, port=int(port),
                             token=token.encode() if token else None,
                             name=self._title.encode(), quality=int(quality))
        out = c_void_p()
        _app_lib.load().cugl_app_server_create(byref(out), res.ctx, byref(desc))
        res.server = out.value
        self._token = token
        url = self.url
        print("cugl: serving %s at %s" % (self._title, url), flush=True)
        return url

    @property
    def url(self):
        """The page's URL while serving, else None."""
        res = self._res
        if res.freed or res.server is None:
            return None
        app = _app_lib.load()
        host = app.cugl_app_server_address(res.server, 0).decode()
        if host in ("0.0.0.0", "::"):
            import socket
            host = socket.gethostname()
        elif ":" in host:
            host = "[%s]" % host
        url = "http://%s:%d/" % (host, app.cugl_app_server_port(res.server))
        return url + ("?token=%s" % self._token if self._token else "")

    def set_stats(self, text):
        """The text the served page shows under the picture."""
        res = self._res
        if res.server is not None:
            _app_lib.load().cugl_app_server_set_stats(res.server, str(text).encode())
