"""Python binding of the embeddable workflow engine (libworkflow, through cffi).

    >>> from workflow_engine import Engine
    >>> with Engine({"clock": {"mode": "manual", "start": "2026-01-01T00:00:00.000Z"}}) as engine:
    ...     engine.call("clock.now")
    {'now': '2026-01-01T00:00:00.000Z'}

The library is found through $WF_LIBRARY, the repository's build when running from the
source tree, or ``ctypes.util.find_library("workflow")``; importing fails with ImportError
when it is missing or was built from a different header version.
"""

from __future__ import annotations

from .engine import Engine, library_version
from .errors import (
    ECONFLICT,
    EINTERNAL,
    EINVALID,
    ENOTFOUND,
    ESTATE,
    ESTORE,
    ETEMPLATE,
    EUNSUPPORTED,
    ITEROVER,
    OK,
    ConflictError,
    InternalError,
    InvalidError,
    IterOver,
    NotFoundError,
    StateError,
    StoreError,
    TemplateError,
    UnsupportedError,
    WorkflowError,
    check_error,
    error_for,
    status_name,
)

__version__: str = library_version()

__all__ = [
    "ECONFLICT",
    "EINTERNAL",
    "EINVALID",
    "ENOTFOUND",
    "ESTATE",
    "ESTORE",
    "ETEMPLATE",
    "EUNSUPPORTED",
    "ITEROVER",
    "OK",
    "ConflictError",
    "Engine",
    "InternalError",
    "InvalidError",
    "IterOver",
    "NotFoundError",
    "StateError",
    "StoreError",
    "TemplateError",
    "UnsupportedError",
    "WorkflowError",
    "__version__",
    "check_error",
    "error_for",
    "library_version",
    "status_name",
]
