"""Demo files are untrusted: nothing in one may read data from outside it (no simulator)."""

from __future__ import annotations

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
