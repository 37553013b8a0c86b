"""Light render meshes: decimated copies of a scene's heavy visual meshes, for the camera only.

A LIBERO scene carries ~390,000 mesh faces, nearly all on visual-only geoms (the kitchen
background, stove, pot, robot pedestal, robot links); on a CPU renderer (llvmpipe) the
frame time is spent drawing them. Physics never reads a visual-only mesh after compile
(collision uses the collision geoms, inertia is computed at compile time), so the frame
can be drawn from lighter copies while the simulation keeps the model it was built with.

How the swap keeps physics bit-identical by construction: the physics ``MjModel`` is never
written. :func:`light_render_model` returns a *copy* of it whose heavy visual meshes are
replaced (in place, inside each mesh's own slice of the vertex/normal/texcoord/face arrays)
by quadric-decimated versions; :func:`upload_meshes` sends those meshes to the renderer's
GL context, overwriting what MuJoCo uploaded from the physics model. Scenes are still built
from the physics model and data (``mjv_updateScene``), so poses, colours and fixture
placement are the live ones; only the triangles drawn for a mesh id differ.

Decimation is ``fast_simplification`` (the Fast-Quadric-Mesh-Simplification core, kept by
the PyVista project; numpy is its only dependency). Texture coordinates and normals are not
decimated by it, so each decimated corner takes them from one original corner of the
vertex that survived the collapse (the one whose normal faces most like the new face; at a
texture seam, the texture side closest to the face's other corners). Results are cached as
``.npz`` files keyed by a hash of the compiled source mesh and the decimation settings.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# Meshes below this many faces are left alone: they cost little to draw.
MIN_FACES = 2000
# A decimated mesh keeps the fraction of its faces the budget table gives it (by the source
# mesh's content hash), this one when the table does not know it, never fewer than MIN_FACES // 2.
KEEP_FRACTION = 0.1
# Per-mesh fractions, calibrated on the suite's scenes (benchmarks/light_mesh_budgets.py).
BUDGETS_FILE = Path(__file__).with_name("light_mesh_budgets.json")
# Bumped whenever the decimation changes, so stale cache entries are never read.
ALGORITHM_VERSION = 1


@dataclass(frozen=True)
class LightMesh:
    """A decimated mesh in MuJoCo's compiled layout (indices relative to the mesh's own slices)."""

    vert: np.ndarray  # float32 [nv, 3], in the source mesh's compiled frame
    normal: np.ndarray  # float32 [nn, 3]
    texcoord: np.ndarray  # float32 [nt, 2]; empty when the source has none
    face: np.ndarray  # int32 [nf, 3] into vert
    facenormal: np.ndarray  # int32 [nf, 3] into normal
    facetexcoord: np.ndarray  # int32 [nf, 3] into texcoord; zeros when there are none


def default_cache_dir() -> Path:
    """``$MEMOBENCH_CACHE/light-meshes``, else ``$XDG_CACHE_HOME`` or ``~/.cache`` + ``memobench/light-meshes``."""
    if os.environ.get("MEMOBENCH_CACHE"):
        return Path(os.environ["MEMOBENCH_CACHE"]) / "light-meshes"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "memobench" / "light-meshes"


def heavy_visual_meshes(model, min_faces: int | None = None) -> list[int]:
    """Ids of meshes with at least ``min_faces`` faces drawn only by visual geoms (no contacts).

    A mesh also used by a colliding geom is left alone, whatever its size.
    """
    import mujoco

    min_faces = MIN_FACES if min_faces is None else min_faces
    is_mesh = model.geom_type == mujoco.mjtGeom.mjGEOM_MESH
    collides = (model.geom_contype != 0) | (model.geom_conaffinity != 0)
    used = set(model.geom_dataid[is_mesh].tolist())
    colliding = set(model.geom_dataid[is_mesh & collides].tolist())
    return [i for i in sorted(used - colliding) if model.mesh_facenum[i] >= min_faces]


def source_mesh(model, mesh_id: int) -> LightMesh:
    """Copies of mesh ``mesh_id``'s compiled arrays, in the same layout as a :class:`LightMesh`."""
    va, nv = model.mesh_vertadr[mesh_id], model.mesh_vertnum[mesh_id]
    na, nn = model.mesh_normaladr[mesh_id], model.mesh_normalnum[mesh_id]
    ta, nt = model.mesh_texcoordadr[mesh_id], model.mesh_texcoordnum[mesh_id]
    fa, nf = model.mesh_faceadr[mesh_id], model.mesh_facenum[mesh_id]
    has_uv = ta >= 0 and nt > 0
    return LightMesh(
        vert=model.mesh_vert[va : va + nv].copy(),
        normal=model.mesh_normal[na : na + nn].copy(),
        texcoord=model.mesh_texcoord[ta : ta + nt].copy() if has_uv else np.zeros((0, 2), np.float32),
        face=model.mesh_face[fa : fa + nf].copy(),
        facenormal=model.mesh_facenormal[fa : fa + nf].copy(),
        facetexcoord=model.mesh_facetexcoord[fa : fa + nf].copy() if has_uv else np.zeros((nf, 3), np.int32),
    )


def source_key(mesh: LightMesh) -> str:
    """A hash of a mesh's compiled arrays: names a mesh whatever the scene calls it."""
    h = hashlib.sha256()
    for array in (mesh.vert, mesh.normal, mesh.texcoord, mesh.face, mesh.facenormal, mesh.facetexcoord):
        h.update(np.ascontiguousarray(array).tobytes())
    return h.hexdigest()[:32]


def mesh_key(mesh: LightMesh, target_faces: int) -> str:
    """Cache key: a hash of the source mesh's arrays, the target size and the algorithm version."""
    return hashlib.sha256(f"v{ALGORITHM_VERSION}:{target_faces}:{source_key(mesh)}".encode()).hexdigest()[:32]


def target_face_count(facenum: int, fraction: float = KEEP_FRACTION) -> int:
    """Faces a decimated copy keeps: ``fraction`` of the source, at least MIN_FACES // 2, always fewer."""
    return min(facenum - 1, max(MIN_FACES // 2, int(facenum * fraction)))


def load_budgets(path: Path = BUDGETS_FILE) -> dict[str, float]:
    """Source key -> fraction of faces kept (1.0: the mesh is drawn as shipped); {} without a table."""
    if not path.exists():
        return {}
    return {key: float(entry["keep"]) for key, entry in json.loads(path.read_text()).items()}


def decimate(mesh: LightMesh, target_faces: int) -> LightMesh:
    """A quadric-decimated copy of ``mesh`` with about ``target_faces`` faces, normals and UVs carried over."""
    import fast_simplification

    # MuJoCo stores many meshes unwelded (three vertices per face); the decimator needs
    # shared vertices to collapse edges, so weld by exact position first.
    welded, corner_vertex = np.unique(mesh.vert, axis=0, return_inverse=True)
    corner_vertex = corner_vertex.reshape(-1)
    faces = corner_vertex[mesh.face].astype(np.int32)
    points = welded.astype(np.float64)
    _, _, collapses = fast_simplification.simplify(points, faces, target_count=target_faces, return_collapses=True)
    new_points, new_faces, mapping = fast_simplification.replay_simplification(points, faces, collapses)
    new_faces = np.asarray(new_faces, dtype=np.int64)

    # The original vertex each decimated vertex stands for: the nearest one among those merged into it.
    alive = mapping >= 0
    dist = np.full(len(points), np.inf)
    dist[alive] = np.linalg.norm(points[alive] - new_points[mapping[alive]], axis=1)
    order = np.lexsort((dist, mapping))
    order = order[mapping[order] >= 0]
    first = np.r_[True, mapping[order][1:] != mapping[order][:-1]]
    survivor = np.empty(len(new_points), dtype=np.int64)
    survivor[mapping[order][first]] = order[first]

    # Candidate original corners of each survivor (CSR over the source's corners).
    source_corner_vertex = faces.reshape(-1)
    by_vertex = np.argsort(source_corner_vertex, kind="stable")
    starts = np.searchsorted(source_corner_vertex[by_vertex], np.arange(len(points)))
    counts = np.bincount(source_corner_vertex, minlength=len(points))
    corner_normals = mesh.normal[mesh.facenormal.reshape(-1)]

    new_corner_vertex = new_faces.reshape(-1)
    cand_count = counts[survivor[new_corner_vertex]]
    owner = np.repeat(np.arange(len(new_corner_vertex)), cand_count)
    offset = np.arange(len(owner)) - np.repeat(np.cumsum(cand_count) - cand_count, cand_count)
    candidate = by_vertex[np.repeat(starts[survivor[new_corner_vertex]], cand_count) + offset]

    face_normals = _face_normals(new_points, new_faces)
    score = np.einsum("ij,ij->i", corner_normals[candidate], face_normals[owner // 3])
    chosen = candidate[_best_per_owner(owner, -score, len(new_corner_vertex))]

    if len(mesh.texcoord):
        corner_uv = mesh.texcoord[mesh.facetexcoord.reshape(-1)]
        uv = corner_uv[chosen].reshape(-1, 3, 2)
        # At a texture seam a vertex has two UVs that face alike: take the one nearest the
        # face's other two corners, so the face does not stretch across the texture.
        others = (uv.sum(axis=1, keepdims=True) - uv) / 2
        gap = np.linalg.norm(corner_uv[candidate] - others.reshape(-1, 2)[owner], axis=1)
        chosen_uv = candidate[_best_per_owner(owner, gap - score, len(new_corner_vertex))]
        texcoord, facetexcoord = _shared(corner_uv[chosen_uv].astype(np.float32))
    else:
        texcoord = np.zeros((0, 2), np.float32)
        facetexcoord = np.zeros((len(new_faces), 3), np.int32)
    normal, facenormal = _shared(corner_normals[chosen].astype(np.float32))
    return LightMesh(
        vert=new_points.astype(np.float32),
        normal=normal,
        texcoord=texcoord,
        face=new_faces.astype(np.int32),
        facenormal=facenormal,
        facetexcoord=facetexcoord,
    )


def _shared(per_corner: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-corner values as (distinct values, int32 [nf, 3] indices): fits in the source's slices."""
    values, index = np.unique(per_corner, axis=0, return_inverse=True)
    return values, index.reshape(-1, 3).astype(np.int32)


def _face_normals(points: np.ndarray, faces: np.ndarray) -> np.ndarray:
    n = np.cross(points[faces[:, 1]] - points[faces[:, 0]], points[faces[:, 2]] - points[faces[:, 0]])
    return n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12)


def _best_per_owner(owner: np.ndarray, cost: np.ndarray, n_owners: int) -> np.ndarray:
    """Index (into ``owner``) of the lowest-cost entry of each owner 0..n_owners-1; owner is sorted."""
    order = np.lexsort((cost, owner))
    first = np.r_[True, owner[order][1:] != owner[order][:-1]]
    best = order[first]
    if len(best) != n_owners:
        raise ValueError("a decimated vertex has no source corner")
    return best


def cached_decimation(mesh: LightMesh, target_faces: int, cache_dir: Path) -> LightMesh:
    """:func:`decimate`, read from ``cache_dir`` when this source mesh was decimated before."""
    path = cache_dir / f"{mesh_key(mesh, target_faces)}.npz"
    if path.exists():
        with np.load(path) as f:
            return LightMesh(**{name: f[name] for name in LightMesh.__dataclass_fields__})
    light = decimate(mesh, target_faces)
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")  # write-then-rename: readers never see half a file
    np.savez(tmp, **{name: getattr(light, name) for name in LightMesh.__dataclass_fields__})
    os.replace(tmp, path)
    return light


def light_render_model(model, cache_dir: Path | None = None):
    """A copy of ``model`` whose heavy visual meshes are decimated; ``model`` itself is not written.

    Returns ``(render_model, mesh_ids)``: the ids whose triangles changed, for :func:`upload_meshes`.
    """
    cache_dir = default_cache_dir() if cache_dir is None else cache_dir
    budgets = load_budgets()
    render_model = copy.copy(model)
    ids = []
    for i in heavy_visual_meshes(model):
        source = source_mesh(model, i)
        fraction = budgets.get(source_key(source), KEEP_FRACTION)
        if fraction >= 1.0:
            continue  # drawn as shipped: where the cameras look closely, detail is worth its cost
        write_mesh(render_model, i, cached_decimation(source, target_face_count(len(source.face), fraction), cache_dir))
        ids.append(i)
    return render_model, ids


def write_mesh(model, i: int, light: LightMesh) -> None:
    """Overwrite mesh ``i``'s slices with ``light`` (never longer than the source, by construction)."""
    for kind, array in (("vert", light.vert), ("normal", light.normal), ("texcoord", light.texcoord)):
        adr, num = getattr(model, f"mesh_{kind}adr")[i], getattr(model, f"mesh_{kind}num")[i]
        if len(array) > num:
            raise ValueError(f"decimated mesh {i} has more {kind}s ({len(array)}) than its source ({num})")
        if adr >= 0 and len(array):
            getattr(model, f"mesh_{kind}")[adr : adr + len(array)] = array
            getattr(model, f"mesh_{kind}num")[i] = len(array)
    fa, nf = model.mesh_faceadr[i], len(light.face)
    model.mesh_face[fa : fa + nf] = light.face
    model.mesh_facenormal[fa : fa + nf] = light.facenormal
    model.mesh_facetexcoord[fa : fa + nf] = light.facetexcoord
    model.mesh_facenum[i] = nf


def upload_meshes(render_model, context, mesh_ids: list[int]) -> None:
    """Send ``mesh_ids`` of ``render_model`` to the GL ``context`` (which must be current)."""
    import mujoco

    for i in mesh_ids:
        mujoco.mjr_uploadMesh(render_model, context, i)
