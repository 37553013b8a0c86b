"""Demo files are untrusted: nothing in one may read data from outside it (no simulator)."""

from __future__ import annotations

import re

import h5py
import numpy as np
import pytest
from tests.data.test_lerobot import write_source

from memobench.data.demo_file import iter_demos
from memobench.data.hdf5_input import UntrustedHdf5Error, open_hdf5
from memobench.data.lerobot import export_lerobot
from memobench.evaluation.regular_files import NotARegularFile

SECRET = b"private key material, 40 bytes long....."


def plant(path, how: str, tmp_path) -> None:
    """Add to demo file ``path`` a dataset or link that reads from outside it."""
    secret = tmp_path / "secret.bin"
    secret.write_bytes(SECRET)
    with h5py.File(path, "a") as f:
        demo = f["data/demo_0"]
        if how == "external":
            del demo["actions"]
            demo.create_dataset("actions", shape=(5,), dtype="u8", external=[(str(secret), 0, 40)])
        elif how == "virtual":
            other = tmp_path / "other.h5"
            with h5py.File(other, "w") as o:
                o["x"] = np.arange(4.0)
            layout = h5py.VirtualLayout(shape=(4,), dtype="f8")
            layout[:] = h5py.VirtualSource(str(other), "x", shape=(4,))
            demo.create_virtual_dataset("obs/extra", layout)
        elif how == "external link":
            demo["obs/linked"] = h5py.ExternalLink(str(tmp_path / "other.h5"), "/x")
        elif how == "soft link":
            demo["obs/alias"] = h5py.SoftLink("/data/demo_0/actions")


@pytest.mark.parametrize("how", ["external", "virtual", "external link", "soft link"])
def test_a_demo_file_that_reads_outside_itself_is_refused(tmp_path, how):
    source = tmp_path / "hdf5"
    write_source(source)
    plant(source / "T01-x.hdf5", how, tmp_path)
    with pytest.raises(UntrustedHdf5Error, match="T01-x.hdf5: /data/demo_0/"):
        open_hdf5(source / "T01-x.hdf5")
    with pytest.raises(UntrustedHdf5Error):
        list(iter_demos(source / "T01-x.hdf5"))
    with pytest.raises(UntrustedHdf5Error):
        export_lerobot(source, tmp_path / "lerobot")
    exported = b"".join(p.read_bytes() for p in (tmp_path / "lerobot").rglob("*") if p.is_file())
    assert SECRET not in exported


def test_a_symlinked_demo_file_is_refused(tmp_path):
    source = tmp_path / "hdf5"
    write_source(source)
    (source / "T01-x.hdf5").rename(tmp_path / "real.hdf5")
    (source / "T01-x.hdf5").symlink_to(tmp_path / "real.hdf5")
    with pytest.raises(NotARegularFile):
        open_hdf5(source / "T01-x.hdf5")


def reshape(path, how: str) -> None:
    """Give demo_0 of demo file ``path`` a dataset that breaks the documented layout."""
    with h5py.File(path, "a") as f:
        demo = f["data/demo_0"]
        n = int(demo.attrs["num_samples"])
        if how == "10^11 rows, never written":  # a few kB on disk; 5 TiB once read
            del demo["actions"]
            demo.create_dataset("actions", shape=(10**11, 7), dtype="f8", chunks=(1024, 7))
        elif how == "a 10^9-frame cue":
            for key in ("cue/states", "cue/robot_states"):
                width, dtype = demo[key].shape[1], demo[key].dtype
                del demo[key]
                demo.create_dataset(key, shape=(10**9, width), dtype=dtype, chunks=(1024, width))
        elif how == "robot state 5 wide":
            del demo["robot_states"]
            demo["robot_states"] = np.zeros((n, 5), np.float32)
        elif how == "text actions":
            actions = demo["actions"][()]
            del demo["actions"]
            demo["actions"] = actions.astype("S8")
        elif how == "60 GiB of frames, each dimension allowed":  # 20,000 rows of 1,024 px, never written
            for key in [k for k in ("actions", "states", "robot_states") if k in demo] + [
                f"obs/{k}" for k in list(demo["obs"]) if not k.endswith("_rgb")
            ]:
                tail, dtype = demo[key].shape[1:], demo[key].dtype
                del demo[key]
                demo.create_dataset(key, shape=(20_000, *tail), dtype=dtype, chunks=(64, *tail))
            for key in [f"{part}/{k}" for part in ("obs", "cue") for k in list(demo[part]) if k.endswith("_rgb")]:
                del demo[key]
            demo.create_dataset("obs/agentview_rgb", shape=(20_000, 1024, 1024, 3), dtype="u1", chunks=(1, 64, 64, 3))
            demo.attrs["num_samples"] = 20_000
        elif how == "an unknown dataset":
            demo["obs/secret"] = np.zeros((n, 3))
        elif how == "num_samples a string":
            demo.attrs["num_samples"] = "6"


BROKEN = {
    "10^11 rows, never written": "actions is float64[100000000000, 7], expected float64[6, 7]",
    "a 10^9-frame cue": "the cue has 1000000000 frames; at most 20000",
    "robot state 5 wide": "robot_states is float32[6, 5], expected float32[6, 8]",
    "text actions": "actions is |S8[6, 7], expected float64[6, 7]",
    "60 GiB of frames, each dimension allowed": "its datasets hold 59 GiB; a demo holds at most 8",
    "an unknown dataset": "unexpected dataset obs/secret",
    "num_samples a string": "attribute 'num_samples' is '6'",
}


@pytest.mark.parametrize("how", list(BROKEN))
def test_a_demo_breaking_the_layout_is_refused_before_any_array_is_read(tmp_path, how):
    """Shapes and dtypes are checked from metadata, naming file, demo and dataset: by every reader
    (export, validate, train's index and batches), before a byte is copied or allocated."""
    from memobench.core.suite import Suite
    from memobench.data.demo_file import read_file_summary
    from memobench.data.demo_layout import DemoLayoutError
    from memobench.data.validate import validate_file
    from memobench.training.dataset import BatchSource, DataOptions, DemoRef, index_demos

    source = tmp_path / "hdf5"
    write_source(source)
    reshape(source / "T01-x.hdf5", how)
    message = f"T01-x.hdf5: data/demo_0: {BROKEN[how]}"
    for read in (read_file_summary, lambda p: list(iter_demos(p, arrays=False))):
        with pytest.raises(DemoLayoutError, match=re.escape(message)):
            read(source / "T01-x.hdf5")
    with pytest.raises(DemoLayoutError, match=re.escape(message)):
        export_lerobot(source, tmp_path / "lerobot")
    assert not (tmp_path / "lerobot").exists() or not any((tmp_path / "lerobot").rglob("*.parquet"))
    with pytest.raises(DemoLayoutError, match=re.escape(message)):
        index_demos(source, tmp_path / "features")
    batches = BatchSource([DemoRef(source / "T01-x.hdf5", tmp_path / "f", "demo_0", "x")], DataOptions(), 1, 0)
    with pytest.raises(DemoLayoutError, match=re.escape(message)):
        batches.actions(batches.refs[0])
    # validate: a file-level problem, under the file's real task name
    task_id = Suite.load().ids[0]
    named = tmp_path / f"{task_id}.hdf5"
    (source / "T01-x.hdf5").rename(named)
    (check,) = validate_file(named, replay=False)
    assert check.demo == -1 and BROKEN[how] in check.problems[0]


def test_a_features_file_of_the_wrong_width_is_refused_naming_it(tmp_path):
    from memobench.data.demo_layout import DemoLayoutError
    from memobench.data.state_features import STATE_DIM, feature_rows

    path = tmp_path / "T01-x.state.hdf5"
    with h5py.File(path, "w") as f:
        f["demo_0/state"] = np.zeros((4, STATE_DIM - 1), np.float32)
        f.create_dataset("demo_1/state", shape=(10**10, STATE_DIM), dtype="f4", chunks=(64, STATE_DIM))
    with open_hdf5(path) as f:
        with pytest.raises(DemoLayoutError, match=rf"T01-x.state.hdf5: demo_0/state is float32\[4, {STATE_DIM - 1}\]"):
            feature_rows(f, "demo_0", path)
        with pytest.raises(DemoLayoutError, match="demo_1/state is float32"):
            feature_rows(f, "demo_1", path)
        with pytest.raises(DemoLayoutError, match="no dataset demo_2/state"):
            feature_rows(f, "demo_2", path)
