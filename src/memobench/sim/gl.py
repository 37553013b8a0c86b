"""Choose and check the OpenGL backend before MuJoCo is imported.

Offscreen rendering without a GPU uses EGL (Mesa llvmpipe). When the EGL
libraries are missing, say which Debian packages provide them rather than
letting PyOpenGL fail deep inside a render call.
"""

from __future__ import annotations

import ctypes.util
import os

EGL_PACKAGES = "libegl1 libegl-mesa0 libgl1-mesa-dri"


class RenderingUnavailable(RuntimeError):
    """Offscreen rendering was asked for but the GL libraries are missing."""


def configure_gl() -> None:
    """Default ``MUJOCO_GL``/``PYOPENGL_PLATFORM`` to EGL unless the user chose otherwise."""
    os.environ.setdefault("MUJOCO_GL", "egl")
    if os.environ["MUJOCO_GL"] == "egl":
        os.environ.setdefault("PYOPENGL_PLATFORM", "egl")


def require_rendering() -> None:
    """Raise :class:`RenderingUnavailable` naming the packages to install if EGL is absent."""
    configure_gl()
    backend = os.environ["MUJOCO_GL"]
    if backend == "egl" and ctypes.util.find_library("EGL") is None:
        raise RenderingUnavailable(
            "camera rendering needs EGL, which is not installed. On Debian/Ubuntu: "
            f"`sudo apt-get install {EGL_PACKAGES}`; or run camera-free "
            "(the default for built-in policies and --video none), or set MUJOCO_GL=osmesa."
        )
