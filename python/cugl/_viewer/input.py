"""Input and events: a frame's input state (Input), its events
(InputEvent, in cugl's input-replay format), and the viewer's methods that
read them, ask about keys and push events."""
import collections
from ctypes import byref, c_size_t, create_string_buffer

from .. import _app_lib
from .._app_structs import AppEvent

_EVENT_TYPES = ("move", "button", "scroll", "key", "resize", "close")
_BUTTONS = ("left", "right", "middle")


Input = collections.namedtuple("Input", "x y dx dy scroll left right middle shift ctrl")
Input.__doc__ = """A frame's input state (cugl_app_input): the cursor in pixels from the
top left, its motion and the wheel's steps since the previous present, the
mouse buttons held or pressed since it (a click within one frame shows for
that frame), and the Shift and Control keys held."""


class InputEvent:
    """One input event of a frame, with the names of cugl's input-replay
    format (one event a line: `<frame> move <x> <y>`, `button <left|right|
    middle> <down|up>`, `scroll <steps>`, `key <key> <down|up>`, `resize
    <width> <height>`, `close`).

    type: "move", "button", "scroll", "key", "resize" or "close"
    frame: the frame whose input first holds it
    x, y: move: the cursor, pixels from the top left
    button: button: "left", "right" or "middle"
    key: key: the format's word ("A", "7", "escape", "left_shift", ...);
        code: its key code (GLFW's, as cugl's)
    down: button, key: pressed (True) or released
    steps: scroll: wheel steps, positive away from the user
    width, height: resize: the framebuffer's new size
    str(event) is its line of the format; InputEvent.parse(line) reads one.
    """

    __slots__ = ("type", "frame", "x", "y", "code", "down", "width", "height", "_line")

    @classmethod
    def _from_c(cls, c):
        e = cls.__new__(cls)
        e.type = _EVENT_TYPES[c.type]
        e.frame, e.x, e.y, e.code, e.down = c.frame, c.x, c.y, c.code, c.down
        e.width, e.height = c.width, c.height
        e._line = None
        return e

    @classmethod
    def parse(cls, line):
        """The event of one line of the format; the frame may be left out
        (it is then 0)."""
        text = line.strip()
        if text and not (text[0].isdigit() or text[0] == "-"):
            text = "0 " + text
        c = AppEvent()
        _app_lib.load().cugl_app_event_parse(byref(c), text.encode())
        return cls._from_c(c)

    def _c(self):
        return AppEvent(frame=self.frame, type=_EVENT_TYPES.index(self.type), x=self.x,
                        y=self.y, code=self.code, down=self.down, width=self.width,
                        height=self.height)

    def __str__(self):
        if self._line is None:
            c = self._c()
            lib = _app_lib.load()
            n = lib.cugl_app_event_format(None, 0, byref(c))
            if n < 0:
                raise ValueError("not a valid event: %r" % (self,))
            buf = create_string_buffer(n + 1)
            lib.cugl_app_event_format(buf, n + 1, byref(c))
            self._line = buf.value.decode()
        return self._line

    @property
    def button(self):
        return _BUTTONS[self.code] if self.type == "button" else None

    @property
    def key(self):
        return str(self).split()[2] if self.type == "key" else None

    @property
    def steps(self):
        return self.y if self.type == "scroll" else None

    def __eq__(self, other):
        return isinstance(other, InputEvent) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    def __repr__(self):
        return "InputEvent(%r)" % str(self)


class _Inputs:
    """Viewer's input: events, input, key_down, key_presses, push_event."""

    def events(self):
        """This frame's input events, in the order they came (InputEvent objects):
        the window's, the browser's and pushed ones alike."""
        count, lost = c_size_t(), c_size_t()
        p = _app_lib.load().cugl_app_context_events(self._ctx(), byref(count), byref(lost))
        return [InputEvent._from_c(p[i]) for i in range(count.value)]

    @property
    def input(self):
        """This frame's input state (an Input)."""
        c = _app_lib.load().cugl_app_context_input(self._ctx()).contents
        return Input(c.x, c.y, c.dx, c.dy, c.scroll, c.left, c.right, c.middle, c.shift,
                     c.ctrl)

    def _key_code(self, key):
        code = self._key_codes.get(key)
        if code is None:
            if isinstance(key, int) and not isinstance(key, bool):
                code = key
            else:
                code = InputEvent.parse("0 key %s down" % (key,)).code
            self._key_codes[key] = code
        return code

    def key_down(self, key):
        """Whether `key` is held this frame: a key code (GLFW's), a character
        ("a", "7", ",") or a word of the input format ("escape", "space",
        "left", "f1", "left_shift", ...)."""
        return _app_lib.load().cugl_app_key_down(self._ctx(), self._key_code(key))

    def key_presses(self, key):
        """How many times `key` (as for key_down) went down in this frame's
        events: for a key that toggles or steps something. A press and
        release within one frame counts, which key_down never shows; a key
        held over many frames counts once."""
        return _app_lib.load().cugl_app_key_presses(self._ctx(), self._key_code(key))

    def push_event(self, event):
        """Queue an input event (an InputEvent, or a line of the input format with
        or without its frame) for the next present, as if the window had
        reported it (cugl_app_context_push_event)."""
        e = event if isinstance(event, InputEvent) else InputEvent.parse(event)
        c = e._c()
        _app_lib.load().cugl_app_context_push_event(self._ctx(), byref(c))
