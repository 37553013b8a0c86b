"""Opening an HDF5 file the project reads (demonstrations, features): self-contained files only.

A demonstration file is untrusted input (downloaded, shared). HDF5 can make a file read
bytes from elsewhere: a dataset with external storage (raw bytes of any file), a virtual
dataset (other files' datasets), an external link (another file's object), or a soft link.
Copied by ``data export`` or read by training, such a file would carry outside data into a
shareable output. :func:`open_hdf5` refuses all four, and a path that is not a regular file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from memobench.evaluation.regular_files import open_regular

if TYPE_CHECKING:
    import h5py


class UntrustedHdf5Error(ValueError):
    """The HDF5 file reads data from outside itself, or is not a regular file."""


def open_hdf5(path: str | os.PathLike[str]) -> h5py.File:
    """``h5py.File(path, "r")`` of a regular, self-contained file (use it as a context manager).

    Raises :class:`UntrustedHdf5Error` naming the file and object otherwise.
    """
    import h5py

    path = Path(path)
    os.close(open_regular(path, os.O_RDONLY))  # not a symlink, FIFO or device (NotARegularFile)
    f = h5py.File(path, "r")
    try:
        _check_group(f, path)
    except BaseException:
        f.close()
        raise
    return f


def _check_group(group: h5py.Group, path: Path) -> None:
    import h5py

    for key in group:
        link = group.get(key, getlink=True)
        name = f"{group.name.rstrip('/')}/{key}"
        if isinstance(link, h5py.SoftLink | h5py.ExternalLink):
            raise UntrustedHdf5Error(f"{path}: {name} is a {type(link).__name__}; demo files hold their own data")
        node = group[key]
        if isinstance(node, h5py.Group):
            _check_group(node, path)
        elif isinstance(node, h5py.Dataset):
            if node.external:
                raise UntrustedHdf5Error(f"{path}: {name} keeps its data in external files; refused")
            if node.is_virtual:
                raise UntrustedHdf5Error(f"{path}: {name} is a virtual dataset (other files' data); refused")
