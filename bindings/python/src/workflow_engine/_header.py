"""Turn include/workflow.h into a cffi ``cdef``.

The C header is the single source of truth for the binding: nothing here repeats a
declaration. The preprocessing is deliberately tiny, because the header is written to be
easy to read: comments are removed, ``#ifdef __cplusplus`` blocks are dropped, and of all
other preprocessor lines only ``#define NAME <integer literal>`` survives (cffi understands
those). Jansson is never included: ``json_t`` is declared opaque, which is all the text
functions need.
"""

from __future__ import annotations

import re
from pathlib import Path

HEADER_NAME = "workflow.h"

_PACKAGE_DIR = Path(__file__).resolve().parent

#: ``json_t`` stays opaque: Python only uses the text functions.
_PRELUDE = "typedef struct json_t json_t;\n"

_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_LINE_COMMENT = re.compile(r"//[^\n]*")
_INT_DEFINE = re.compile(r"#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)\s+(-?(?:0[xX][0-9a-fA-F]+|[0-9]+))\s*$")
_CPLUSPLUS_IF = re.compile(r"#\s*(?:ifdef\s+__cplusplus\b|if\s+defined\s*\(?\s*__cplusplus\b)")
_CONDITIONAL_OPEN = re.compile(r"#\s*if")
_CONDITIONAL_CLOSE = re.compile(r"#\s*endif\b")


def source_tree_root() -> Path | None:
    """The repository root when this package runs from its source tree, else None.

    The source layout is ``<repo>/bindings/python/src/workflow_engine``.
    """
    src = _PACKAGE_DIR.parent
    bindings = src.parent.parent
    if src.name != "src" or bindings.name != "bindings":
        return None
    root = bindings.parent
    return root if (root / "include" / HEADER_NAME).is_file() else None


def locate_header() -> Path:
    """The header to build the cdef from.

    From the source tree: the repository's ``include/workflow.h``. Installed: the copy that
    the build step placed in ``workflow_engine/_include/``. Raises ImportError when neither
    exists.
    """
    candidates: list[Path] = []
    root = source_tree_root()
    if root is not None:
        candidates.append(root / "include" / HEADER_NAME)
    candidates.append(_PACKAGE_DIR / "_include" / HEADER_NAME)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    tried = ", ".join(str(c) for c in candidates)
    raise ImportError(
        f"workflow_engine: cannot find the C header {HEADER_NAME} (tried {tried}); "
        "reinstall the package from the repository so the build copies it"
    )


def strip_comments(text: str) -> str:
    """Remove ``/* */`` and ``//`` comments (the header has no comment markers in strings)."""
    text = _BLOCK_COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return _LINE_COMMENT.sub("", text)


def _keep_line(line: str, skip_depth: int) -> tuple[bool, int]:
    """Decide whether one line survives, tracking how deep inside a skipped block we are."""
    stripped = line.strip()
    if skip_depth:
        if _CONDITIONAL_OPEN.match(stripped):
            return False, skip_depth + 1
        if _CONDITIONAL_CLOSE.match(stripped):
            return False, skip_depth - 1
        return False, skip_depth
    if _CPLUSPLUS_IF.match(stripped):
        return False, 1
    if stripped.startswith("#"):
        return bool(_INT_DEFINE.match(stripped)), 0
    return True, 0


def cdef_from_header(text: str) -> str:
    """The cffi cdef for the header text ``text``."""
    kept: list[str] = []
    skip_depth = 0
    for line in strip_comments(text).splitlines():
        keep, skip_depth = _keep_line(line, skip_depth)
        if keep and line.strip():
            kept.append(line.strip() if line.lstrip().startswith("#") else line.rstrip())
    return _PRELUDE + "\n".join(kept) + "\n"
