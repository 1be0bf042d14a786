"""Status codes and the exceptions they map to.

Every failing call of the library returns a negative ``wf_status`` and leaves a per-thread
error record. :func:`check_error` is the one place that turns the two into an exception:
it must run on the thread that made the failing call, right after it, before any other call
of the library on that thread replaces the record.
"""

from __future__ import annotations

import json
from typing import Any

from ._ffi import c_text, lib

# Status codes, from the header's ``enum wf_status`` (through cffi, never retyped here).
OK: int = lib.WF_OK
EINVALID: int = lib.WF_EINVALID
ENOTFOUND: int = lib.WF_ENOTFOUND
ESTATE: int = lib.WF_ESTATE
ETEMPLATE: int = lib.WF_ETEMPLATE
ECONFLICT: int = lib.WF_ECONFLICT
ESTORE: int = lib.WF_ESTORE
EUNSUPPORTED: int = lib.WF_EUNSUPPORTED
ITEROVER: int = lib.WF_ITEROVER
EINTERNAL: int = lib.WF_EINTERNAL


def status_name(status: int) -> str:
    """The symbolic name of a status ("WF_EINVALID"), or "WF_UNKNOWN"."""
    return c_text(lib.wf_status_name(status))


class WorkflowError(Exception):
    """A call into the engine failed.

    Attributes: ``status`` (the negative ``wf_status``), ``code`` (the precise condition,
    e.g. ``"cycleDetected"``), ``message`` (a sentence for people) and ``details`` (a dict
    of structured facts, e.g. ``{"errors": [...]}`` for an invalid template).
    """

    def __init__(
        self, message: str = "", status: int = EINTERNAL, code: str = "internal", details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.details: dict[str, Any] = details if details is not None else {}

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(message={self.message!r}, status={status_name(self.status)}, "
            f"code={self.code!r}, details={self.details!r})"
        )


class InvalidError(WorkflowError, ValueError):
    """WF_EINVALID: bad arguments, malformed JSON, wrong types."""


class NotFoundError(WorkflowError, KeyError):
    """WF_ENOTFOUND: no such workflow, node, run, job, await, asset, template or tool."""

    def __str__(self) -> str:  # KeyError would print a quoted repr of the message
        return self.message


class StateError(WorkflowError):
    """WF_ESTATE: not allowed in the current state."""


class TemplateError(WorkflowError):
    """WF_ETEMPLATE: the template is invalid; ``details["errors"]`` lists every error."""


class ConflictError(WorkflowError):
    """WF_ECONFLICT: claimed elsewhere, duplicate, or a concurrent change."""


class StoreError(WorkflowError):
    """WF_ESTORE: persistence failed; nothing was half-written."""


class UnsupportedError(WorkflowError):
    """WF_EUNSUPPORTED: unknown op, or an option this build does not support."""


class InternalError(WorkflowError):
    """WF_EINTERNAL: a bug in the engine; please report it with the error record."""


class IterOver(WorkflowError, StopIteration):
    """WF_ITEROVER: an iteration finished. Not a failure; also a StopIteration."""


_CLASSES: dict[int, type[WorkflowError]] = {
    EINVALID: InvalidError,
    ENOTFOUND: NotFoundError,
    ESTATE: StateError,
    ETEMPLATE: TemplateError,
    ECONFLICT: ConflictError,
    ESTORE: StoreError,
    EUNSUPPORTED: UnsupportedError,
    ITEROVER: IterOver,
    EINTERNAL: InternalError,
}


def error_for(status: int, code: str, message: str, details: dict[str, Any]) -> WorkflowError:
    """The exception for a failure; an unknown negative status gives a plain WorkflowError."""
    return _CLASSES.get(status, WorkflowError)(message, status=status, code=code, details=details)


def _details(text: str) -> dict[str, Any]:
    """Parse ``details_json``; a non-object is kept under "value" rather than lost."""
    if not text:
        return {}
    parsed = json.loads(text)
    return parsed if isinstance(parsed, dict) else {"value": parsed}


def check_error(status: int) -> None:
    """Raise the exception for ``status`` if it is not WF_OK.

    Reads this thread's error record (``wf_error_last()``), which belongs to the library and
    is only valid until the next library call on this thread, so every field is copied out
    before anything else runs.
    """
    if status == OK:
        return
    record = lib.wf_error_last()
    code, message = c_text(record.code, "replace"), c_text(record.message, "replace")
    details = _details(c_text(record.details_json, "replace"))
    raise error_for(status, code, message, details)
