__version__ = "0.1.0"  # the cugl project version (meson.build); a test compares them
