"""Load libworkflow through cffi in ABI mode (``ffi.dlopen``), declared from the real header.

Importing this module either yields a usable ``ffi`` and ``lib`` whose version matches the
header, or raises ImportError saying what is missing or mismatched.
"""

from __future__ import annotations

import ctypes.util
import os
from pathlib import Path
from typing import Any

import cffi

from . import _header

LIBRARY_ENV = "WF_LIBRARY"


def _library_candidates() -> list[tuple[str, str]]:
    """(where it came from, path or name) pairs to try, in order of preference."""
    explicit = os.environ.get(LIBRARY_ENV)
    if explicit:
        return [(f"${LIBRARY_ENV}", explicit)]
    found: list[tuple[str, str]] = []
    root = _header.source_tree_root()
    if root is not None:
        built = root / ".build" / "release" / "libworkflow.so"
        if built.is_file():
            found.append(("the source tree's build", str(built)))
    name = ctypes.util.find_library("workflow")
    if name:
        found.append(('ctypes.util.find_library("workflow")', name))
    return found


def _dlopen_flags(ffi: cffi.FFI) -> int:
    """RTLD_NOW | RTLD_NODELETE, the latter where the platform has it."""
    now: int = getattr(ffi, "RTLD_NOW", 0)
    nodelete: int = getattr(ffi, "RTLD_NODELETE", 0)
    return now | nodelete


def _open_library(ffi: cffi.FFI) -> Any:
    """dlopen the first loadable candidate; ImportError naming every attempt otherwise.

    The library is opened with RTLD_NODELETE: once an engine has run, threads of the Swift
    runtime (libdispatch workers) live on in the process, and unloading the library, which
    cffi would otherwise do when ``lib`` is collected at interpreter exit, unmaps code those
    threads still run and crashes the process.
    """
    candidates = _library_candidates()
    failures: list[str] = []
    for origin, path in candidates:
        try:
            return ffi.dlopen(path, _dlopen_flags(ffi))
        except OSError as error:
            failures.append(f"{origin} ({path}): {error}")
    if not candidates:
        failures.append(
            f"${LIBRARY_ENV} is not set, no source-tree build was found, and "
            'ctypes.util.find_library("workflow") found nothing'
        )
    raise ImportError(
        "workflow_engine: cannot load libworkflow: "
        + "; ".join(failures)
        + f". Set {LIBRARY_ENV} to the path of libworkflow.so, or build it with "
        "`swift build -c release --product workflow` in the repository."
    )


def check_version(header_number: int, library_number: int, header_path: Path) -> None:
    """Raise ImportError unless the library was built from the same header version."""
    if header_number != library_number:
        raise ImportError(
            f"workflow_engine: version mismatch: the header {header_path} declares "
            f"WF_VERSION_NUMBER {header_number} but the loaded library reports "
            f"wf_libversion_number() == {library_number}; use a library built from that header "
            f"(set {LIBRARY_ENV}) or reinstall the binding next to the matching header"
        )


def _load() -> tuple[cffi.FFI, Any, Path]:
    header_path = _header.locate_header()
    ffi = cffi.FFI()
    try:
        ffi.cdef(_header.cdef_from_header(header_path.read_text(encoding="utf-8")))
    except cffi.CDefError as error:
        raise ImportError(f"workflow_engine: cannot declare {header_path} to cffi: {error}") from error
    lib = _open_library(ffi)
    check_version(int(lib.WF_VERSION_NUMBER), int(lib.wf_libversion_number()), header_path)
    return ffi, lib, header_path


ffi, lib, header_path = _load()


def c_text(pointer: Any, errors: str = "strict") -> str:
    """Copy a NUL-terminated UTF-8 C string (ownership stays with the caller); NULL is ""."""
    if pointer == ffi.NULL:
        return ""
    raw = ffi.string(pointer)
    assert isinstance(raw, bytes)  # a char * always reads as bytes
    return raw.decode("utf-8", errors=errors)
