"""The :class:`Engine`: one ``wf_engine`` handle and the ops called on it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import TracebackType
from typing import Any

from ._ffi import c_text, ffi, lib
from .errors import ESTATE, InternalError, StateError, StoreError, check_error


def library_version() -> str:
    """The library's version text, e.g. "0.1.0" (``wf_libversion()``)."""
    return c_text(lib.wf_libversion())


def _to_json(value: Mapping[str, Any] | None, what: str) -> bytes | None:
    """Serialise a config or args mapping to JSON text; TypeError if it is not JSON."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(f"{what} must be a dict or None, not {type(value).__name__}")
    try:
        return json.dumps(dict(value), allow_nan=False).encode("utf-8")
    except (TypeError, ValueError, RecursionError) as error:
        # RecursionError: nested deeper than Python's encoder goes (the engine refuses past
        # 512 levels anyway).
        raise TypeError(f"{what} cannot be serialised as JSON: {error}") from error


def _op_name(op: object) -> bytes:
    if not isinstance(op, str):
        raise TypeError(f"op must be a str, not {type(op).__name__}")
    if "\0" in op:
        raise ValueError("op must not contain NUL characters")
    return op.encode("utf-8", errors="surrogatepass")


def _take_text(out: Any) -> str:
    """Copy the library-allocated text in ``*out`` and release it with wf_free()."""
    pointer = out[0]
    if pointer == ffi.NULL:
        raise InternalError("the library reported success but returned no result text")
    try:
        return c_text(pointer)
    finally:
        lib.wf_free(pointer)


class _Guard:
    """Lets calls run concurrently but makes close() wait for calls in flight.

    The library serialises calls on one handle itself, and answers a call that comes after
    the close with engineClosed; this guard lets the calls already begun finish first.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._active = 0
        self.closed = False

    @contextmanager
    def call(self) -> Iterator[None]:
        with self._cond:
            if self.closed:
                # The record the library gives a closed handle, so a host sees one answer.
                raise StateError(
                    "engine is not an open engine: it was closed, or never opened",
                    status=ESTATE,
                    code="engineClosed",
                    details={"argument": "engine"},
                )
            self._active += 1
        try:
            yield
        finally:
            with self._cond:
                self._active -= 1
                self._cond.notify_all()

    def close(self) -> bool:
        """Mark closed and wait for calls in flight; False if it was already closed."""
        with self._cond:
            if self.closed:
                return False
            self.closed = True
            self._cond.wait_for(lambda: self._active == 0)
            return True


class Engine:
    """An open workflow engine.

    ``Engine(config)`` opens one (``wf_engine_open_text``) with ``config`` as JSON, e.g.
    ``{"store": "wf.sqlite", "clock": {"mode": "manual", "start": "2026-01-01T00:00:00.000Z"}}``;
    ``None`` means every default (in-memory store, system clock).

    Ownership: the handle belongs to this object. :meth:`close` frees it; an engine that is
    never closed is freed by a cffi finaliser when it is garbage-collected. Every state
    change is committed by the call that made it, so neither path loses anything.

    Threads: :meth:`call` may be used from several threads at once (the library serialises
    calls on a handle). :meth:`close` waits for calls in flight.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        config_json = _to_json(config, "config")
        out = ffi.new("wf_engine **")
        check_error(lib.wf_engine_open_text(out, config_json if config_json is not None else ffi.NULL))
        self._handle: Any = ffi.gc(out[0], lib.wf_engine_free)
        self._guard = _Guard()

    def call(self, op: str, args: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Call the op ``op`` (e.g. "template.register") with ``args``; return its result.

        Raises TypeError for a non-str op or args that are not a JSON-serialisable dict,
        and a :class:`~workflow_engine.WorkflowError` subclass when the engine refuses.
        ``args`` is written with :func:`json.dumps`, so its rules hold: keys that are not
        str become text (``1`` → ``"1"``, ``None`` → ``"null"``), and an int beyond 64 bits
        arrives as a real (include/workflow.h).
        """
        name = _op_name(op)
        return self._call(name, _to_json(args, "args"))

    def call_json(self, op: str, args_json: str | None) -> dict[str, Any]:
        """Like :meth:`call`, with the arguments given as JSON text passed through unchecked.

        For hosts that already hold JSON text, and for exercising the engine's own checks
        (``"[1]"`` is the engine's WF_EINVALID, not a Python TypeError). Text holding a NUL
        character is a ValueError: C text ends there, so the rest would be dropped unseen.
        """
        if args_json is not None and not isinstance(args_json, str):
            raise TypeError(f"args_json must be a str or None, not {type(args_json).__name__}")
        if args_json is not None and "\0" in args_json:
            # The C text would end there and the rest be dropped unseen.
            raise ValueError("args_json must not contain NUL characters (write U+0000 as \\u0000)")
        text = None if args_json is None else args_json.encode("utf-8", errors="surrogatepass")
        return self._call(_op_name(op), text)

    def _call(self, op: bytes, args_json: bytes | None) -> dict[str, Any]:
        out = ffi.new("char **")
        with self._guard.call():
            status = lib.wf_call_text(out, self._handle, op, args_json if args_json is not None else ffi.NULL)
            check_error(status)  # same thread, straight after the call: the record is ours
            result = json.loads(_take_text(out))
        if not isinstance(result, dict):
            raise InternalError(f"the library returned a {type(result).__name__}, not a JSON object")
        return result

    def close(self) -> None:
        """Close and free the engine (``wf_engine_close``). Idempotent; later calls raise StateError
        ("engineClosed", WF_ESTATE, as the library answers a call on a closed engine).

        Raises StoreError ("storeWriteFailed") when the disk refused the final writes that put
        every commit on disk; the engine is closed all the same. With durability "full" nothing
        is at risk then; with "normal" a power cut before the system writes the last calls'
        changes may take them (include/workflow.h, wf_engine_close).
        """
        if not self._guard.close():
            return
        handle, self._handle = self._handle, None
        ffi.gc(handle, None)  # disarm the finaliser, so the handle is freed exactly once: here
        check_error(lib.wf_engine_close(handle))

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has run."""
        return self._guard.closed

    @property
    def version(self) -> str:
        """The library's version text, e.g. "0.1.0"."""
        return library_version()

    def __enter__(self) -> Engine:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        try:
            self.close()
        except StoreError:
            if exc_type is None:
                raise
            # The exception on its way out says more than a failed close; the engine is closed.

    def __repr__(self) -> str:
        return f"<workflow_engine.Engine {'closed' if self.closed else 'open'}>"
