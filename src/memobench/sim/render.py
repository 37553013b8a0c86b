"""Image post-processing for policy observations (pure numpy/PIL, no simulator)."""

from __future__ import annotations

import numpy as np
from PIL import Image


def resize_with_pad(image: np.ndarray, size: int) -> np.ndarray:
    """Resize uint8 [H, W, 3] to [size, size, 3], keeping the aspect ratio, padding with black.

    The image is scaled so its longer side equals ``size`` and centred; the
    remaining rows or columns are zeros. A square input is a plain resize.
    """
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"expected uint8 [H, W, 3], got {image.dtype} {image.shape}")
    h, w = image.shape[:2]
    if (h, w) == (size, size):
        return image
    scale = size / max(h, w)
    new_h, new_w = max(1, round(h * scale)), max(1, round(w * scale))
    resized = np.asarray(Image.fromarray(image).resize((new_w, new_h), Image.BILINEAR))
    out = np.zeros((size, size, 3), dtype=np.uint8)
    top, left = (size - new_h) // 2, (size - new_w) // 2
    out[top : top + new_h, left : left + new_w] = resized
    return out


def resize_squish(image: np.ndarray, size: int) -> np.ndarray:
    """Resize uint8 [H, W, 3] to [size, size, 3] by stretching (area interpolation, no padding):
    RoboMemArena's resize. A non-square frame changes its aspect ratio."""
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"expected uint8 [H, W, 3], got {image.dtype} {image.shape}")
    if image.shape[:2] == (size, size):
        return image
    return np.asarray(Image.fromarray(image).resize((size, size), Image.BOX))


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    """Peak signal-to-noise ratio (dB) of two uint8 images of one shape; inf when identical."""
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else float(10 * np.log10(255**2 / mse))
