"""Build step: copy the repository's C header into the package before building.

The binding declares the library to cffi from include/workflow.h at import time, so an
installed package carries a copy as package data (workflow_engine/_include/workflow.h, a
gitignored folder). The package version is the header's WF_VERSION.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent
REPO_HEADER = HERE.parent.parent / "include" / "workflow.h"
STAGED_HEADER = HERE / "src" / "workflow_engine" / "_include" / "workflow.h"


def stage_header() -> Path:
    """Copy the repository header into the package (kept as is when building from an sdist,
    where the repository is absent but the staged copy was packed)."""
    if REPO_HEADER.is_file():
        STAGED_HEADER.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO_HEADER, STAGED_HEADER)
    elif not STAGED_HEADER.is_file():
        raise SystemExit(f"cannot find the C header: neither {REPO_HEADER} nor {STAGED_HEADER} exists")
    return STAGED_HEADER


def header_version() -> str:
    match = re.search(r'^#define\s+WF_VERSION\s+"([^"]+)"', stage_header().read_text(encoding="utf-8"), re.M)
    if not match:
        raise SystemExit("the C header has no #define WF_VERSION \"x.y.z\"")
    return match.group(1)


class BuildPy(build_py):
    def run(self) -> None:
        stage_header()
        super().run()


class SDist(sdist):
    def run(self) -> None:
        stage_header()
        super().run()


setup(version=header_version(), cmdclass={"build_py": BuildPy, "sdist": SDist})
