"""Decimation and its cache on a synthetic mesh (no simulator)."""

from __future__ import annotations

import numpy as np
import pytest

from memobench.sim.light_meshes import LightMesh, cached_decimation, decimate


def uv_sphere(n: int = 60) -> LightMesh:
    """An unwelded UV sphere in MuJoCo's compiled layout: three vertices, normals and UVs per face."""
    theta, phi = np.meshgrid(np.linspace(0, np.pi, n), np.linspace(0, 2 * np.pi, 2 * n))
    grid = np.stack([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), np.cos(theta)], -1)
    uv = np.stack([phi / (2 * np.pi), theta / np.pi], -1)
    quads = [(i, j) for i in range(2 * n - 1) for j in range(n - 1)]
    tris = [t for i, j in quads for t in (((i, j), (i + 1, j), (i + 1, j + 1)), ((i, j), (i + 1, j + 1), (i, j + 1)))]
    idx = np.array(tris)  # [nf, 3, 2]
    vert = grid[idx[..., 0], idx[..., 1]].reshape(-1, 3).astype(np.float32)
    texcoord = uv[idx[..., 0], idx[..., 1]].reshape(-1, 2).astype(np.float32)
    corners = np.arange(len(vert), dtype=np.int32).reshape(-1, 3)
    return LightMesh(vert, vert.copy(), texcoord, corners, corners.copy(), corners.copy())


def test_decimation_keeps_shape_normals_and_texture_coordinates():
    source = uv_sphere()
    light = decimate(source, target_faces=len(source.face) // 10)
    assert len(light.face) <= len(source.face) // 5
    assert len(light.vert) < len(source.vert) and len(light.normal) <= len(source.normal)
    radius = np.linalg.norm(light.vert, axis=1)
    assert radius.min() > 0.9 and radius.max() < 1.1  # still a unit sphere (quadric optima sit near it)
    np.testing.assert_allclose(np.linalg.norm(light.normal, axis=1), 1, atol=1e-5)
    assert light.face.max() < len(light.vert) and light.facenormal.max() < len(light.normal)
    assert light.facetexcoord.max() < len(light.texcoord)
    # Each corner's normal points the way its vertex sits on the sphere.
    dots = np.einsum("ij,ij->i", light.normal[light.facenormal].reshape(-1, 3), light.vert[light.face].reshape(-1, 3))
    assert np.median(dots) > 0.95


def test_cached_decimation_is_read_back_unchanged(tmp_path):
    source = uv_sphere(20)
    made = cached_decimation(source, 200, tmp_path)
    assert len(list(tmp_path.glob("*.npz"))) == 1
    again = cached_decimation(source, 200, tmp_path)
    for name in LightMesh.__dataclass_fields__:
        np.testing.assert_array_equal(getattr(made, name), getattr(again, name))


def test_a_mesh_without_texture_coordinates_stays_without():
    s = uv_sphere(20)
    bare = LightMesh(s.vert, s.normal, np.zeros((0, 2), np.float32), s.face, s.facenormal, np.zeros_like(s.face))
    light = decimate(bare, 200)
    assert light.texcoord.shape == (0, 2)
    with pytest.raises(ValueError):
        decimate(bare, -1)
