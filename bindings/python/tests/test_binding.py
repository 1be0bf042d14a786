"""The binding itself: loading, handles, calls, errors, threads, stores, versions."""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import MANUAL_CLOCK, REPO_ROOT, SRC_DIR

import workflow_engine as wf
from workflow_engine import Engine
from workflow_engine._ffi import check_version, ffi, lib
from workflow_engine._header import cdef_from_header

HEADER = REPO_ROOT / "include" / "workflow.h"

TOOL_A: dict[str, Any] = {"kind": "A", "resourceClass": "local", "inputs": {}, "outputs": {"image": "ImageRef"}}

ENGINE_MODULE = importlib.import_module("workflow_engine.engine")


class LibSpy:
    """Stands in for the ``lib`` of workflow_engine.engine: forwards every call to the real
    library and records the text results handed out, the texts freed and the handles freed."""

    def __init__(self) -> None:
        self.real = ENGINE_MODULE.lib
        self.texts: list[Any] = []
        self.freed: list[Any] = []
        self.events: list[str] = []

    def wf_call_text(self, out: Any, *rest: Any) -> int:
        status: int = self.real.wf_call_text(out, *rest)
        self.texts.append(out[0])
        self.events.append("call returned")
        return status

    def wf_free(self, pointer: Any) -> None:
        self.freed.append(pointer)
        self.real.wf_free(pointer)

    def wf_engine_close(self, handle: Any) -> int:
        self.events.append("engine freed")
        status: int = self.real.wf_engine_close(handle)
        return status

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def cyclic_template() -> dict[str, Any]:
    """Two nodes feeding each other, one edge with the wrong type."""
    return {
        "schema": "app.workflow/v2",
        "name": "bad",
        "nodes": [
            {"id": "a", "kind": "K", "inputs": {"i": "ImageRef"}, "outputs": {"o": "ImageRef"}},
            {"id": "b", "kind": "K", "inputs": {"i": "ImageRef"}, "outputs": {"o": "MaskRef"}},
        ],
        "edges": [{"from": ["a", "o"], "to": ["b", "i"]}, {"from": ["b", "o"], "to": ["a", "i"]}],
    }


def header_value(pattern: str) -> str:
    """The first group of ``pattern`` in the header (fails the test when absent)."""
    match = re.search(pattern, HEADER.read_text())
    assert match is not None, pattern
    return match.group(1)


def run_python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter (for import-time and crash-prone checks)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})}
    )


# --------------------------------------------------------------------------- loading and versions


def test_version_strings_agree() -> None:
    header_version = header_value(r'#define WF_VERSION "([^"]+)"')
    assert wf.__version__ == header_version
    assert wf.library_version() == header_version
    with Engine() as engine:
        assert engine.version == header_version


def test_library_version_number_matches_header() -> None:
    number = int(header_value(r"#define WF_VERSION_NUMBER (\d+)"))
    assert number == lib.WF_VERSION_NUMBER
    assert lib.wf_libversion_number() == number


@pytest.mark.parametrize(
    "name",
    [
        "OK",
        "EINVALID",
        "ENOTFOUND",
        "ESTATE",
        "ETEMPLATE",
        "ECONFLICT",
        "ESTORE",
        "EUNSUPPORTED",
        "ITEROVER",
        "EINTERNAL",
    ],
)
def test_status_constants_come_from_the_header(name: str) -> None:
    value = int(header_value(rf"\bWF_{name} = (-?\d+)"))
    assert getattr(wf, name) == value
    assert wf.status_name(value) == f"WF_{name}"


def test_status_name_of_unknown_number() -> None:
    assert wf.status_name(12345) == "WF_UNKNOWN"


def test_cdef_keeps_declarations_and_integer_defines_only() -> None:
    cdef = cdef_from_header(HEADER.read_text())
    assert cdef.startswith("typedef struct json_t json_t;\n")
    assert re.search(r"^#define WF_VERSION_NUMBER \d+$", cdef, re.M)
    assert "WF_EINVALID = -2," in cdef
    assert "int wf_call_text(char **result_json, wf_engine *engine, const char *op, const char *args_json);" in cdef
    for gone in ("/*", "*/", "#include", "jansson.h", "#ifndef", "#endif", "extern", '"0.', "__cplusplus"):
        assert gone not in cdef, gone


def test_cdef_drops_cplusplus_blocks_and_comments() -> None:
    text = (
        '#include <jansson.h>\n#ifdef __cplusplus\nextern "C" {\n#ifdef X\n#endif\n#endif\n'
        '#define A 1 /* one */\n#define B "b"\n#define C -0x10\n// note\nint f(void); /* f\n spans */\n'
        "#ifdef __cplusplus\n}\n#endif\n"
    )
    assert cdef_from_header(text) == "typedef struct json_t json_t;\n#define A 1\n#define C -0x10\nint f(void);\n"


def test_check_version_mismatch_raises_import_error() -> None:
    check_version(100, 100, HEADER)
    with pytest.raises(ImportError, match=r"version mismatch.*WF_VERSION_NUMBER 100.*== 101"):
        check_version(100, 101, HEADER)


def test_import_fails_on_header_library_mismatch(tmp_path: Path) -> None:
    """An installed-layout copy whose packaged header claims another version refuses to load."""
    package = tmp_path / "workflow_engine"
    shutil.copytree(SRC_DIR / "workflow_engine", package, ignore=shutil.ignore_patterns("__pycache__", "_include"))
    (package / "_include").mkdir()
    header = re.sub(r"#define WF_VERSION_NUMBER \d+", "#define WF_VERSION_NUMBER 999999", HEADER.read_text())
    (package / "_include" / "workflow.h").write_text(header)
    done = run_python(
        "import workflow_engine",
        {"PYTHONPATH": str(tmp_path), "WF_LIBRARY": str(REPO_ROOT / ".build/release/libworkflow.so")},
    )
    assert done.returncode != 0
    assert "ImportError: workflow_engine: version mismatch" in done.stderr
    assert "999999" in done.stderr


def test_import_uses_packaged_header_when_not_in_source_tree(tmp_path: Path) -> None:
    package = tmp_path / "workflow_engine"
    shutil.copytree(SRC_DIR / "workflow_engine", package, ignore=shutil.ignore_patterns("__pycache__", "_include"))
    env = {"PYTHONPATH": str(tmp_path), "WF_LIBRARY": str(REPO_ROOT / ".build/release/libworkflow.so")}
    missing = run_python("import workflow_engine", env)
    assert missing.returncode != 0 and "cannot find the C header" in missing.stderr
    (package / "_include").mkdir()
    shutil.copyfile(HEADER, package / "_include" / "workflow.h")
    done = run_python("import workflow_engine as w; print(w._ffi.header_path, w.__version__)", env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(str(package / "_include" / "workflow.h"))


def test_import_fails_clearly_without_the_library() -> None:
    done = run_python(
        "import workflow_engine", {"PYTHONPATH": str(SRC_DIR), "WF_LIBRARY": "/nonexistent/libworkflow.so"}
    )
    assert done.returncode != 0
    assert (
        "ImportError: workflow_engine: cannot load libworkflow: $WF_LIBRARY (/nonexistent/libworkflow.so)"
        in done.stderr
    )


# --------------------------------------------------------------------------- opening, closing, finalising


def test_open_with_defaults_and_call() -> None:
    with Engine() as engine:
        info = engine.call("engine.info")
        assert info["store"] == ":memory:"
        assert info["clock"]["mode"] == "system"


def test_call_returns_result_dict(engine: Engine) -> None:
    assert engine.call("clock.now") == {"now": "2026-01-01T00:00:00.000Z"}
    assert engine.call("clock.advance", {"seconds": 30})["now"] == "2026-01-01T00:00:30.000Z"
    assert engine.call("clock.now", None) == {"now": "2026-01-01T00:00:30.000Z"}


def test_call_json_passes_text_through(engine: Engine) -> None:
    assert engine.call_json("clock.advance", '{"seconds": 1.5}')["now"] == "2026-01-01T00:00:01.500Z"
    assert engine.call_json("clock.now", None)["now"] == "2026-01-01T00:00:01.500Z"


def test_close_is_idempotent_and_later_calls_fail() -> None:
    engine = Engine(MANUAL_CLOCK)
    assert not engine.closed
    engine.close()
    engine.close()
    assert engine.closed
    with pytest.raises(wf.StateError) as caught:
        engine.call("clock.now")
    assert caught.value.code == "engineClosed"
    assert caught.value.status == wf.ESTATE  # as every host reports it (docs/OPS.md)
    # The very record the C library answers for a closed handle: asked of the library itself.
    from workflow_engine._ffi import ffi, lib

    out = ffi.new("wf_engine **")
    wf.check_error(lib.wf_engine_open_text(out, b'{"clock": {"mode": "manual"}}'))
    handle = out[0]
    wf.check_error(lib.wf_engine_close(handle))
    result = ffi.new("char **")
    with pytest.raises(wf.StateError) as answered:
        wf.check_error(lib.wf_call_text(result, handle, b"clock.now", ffi.NULL))
    assert (caught.value.message, caught.value.details) == (answered.value.message, answered.value.details)
    assert caught.value.details == {"argument": "engine"}


def test_context_manager_closes_even_on_error() -> None:
    with pytest.raises(RuntimeError), Engine() as engine:
        assert engine.call("clock.now")["now"]
        raise RuntimeError("boom")
    assert engine.closed
    assert "closed" in repr(engine)


def test_forgotten_engine_is_freed_by_the_finaliser(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    engine = Engine({"store": str(store)})
    engine.call("tool.register", TOOL_A)
    wal = Path(f"{store}-wal")
    assert wal.exists()  # the open connection keeps a WAL; wf_engine_free checkpoints and removes it
    alive = weakref.ref(engine)
    del engine
    gc.collect()
    assert alive() is None
    assert not wal.exists()


def test_close_disarms_the_finaliser() -> None:
    """Closing then collecting must not free the handle twice (a double free would crash)."""
    done = run_python(
        "import gc, workflow_engine as w\n"
        "for _ in range(200):\n"
        "    e = w.Engine({'store': ':memory:'}); e.call('clock.now'); e.close(); e.close(); del e; gc.collect()\n"
        "print('survived')\n",
        {"PYTHONPATH": str(SRC_DIR)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "survived"


def test_process_exit_after_using_engines_does_not_crash() -> None:
    """The library must stay loaded at interpreter exit: Swift runtime threads outlive the
    engines, and unloading the code they run crashed the process (see _ffi._open_library)."""
    code = (
        "import workflow_engine as w\n"
        "closed = w.Engine({'clock': {'mode': 'manual'}}); closed.call('clock.advance', {'seconds': 5}); closed.close()\n"
        "leaked = w.Engine({'clock': {'mode': 'manual'}}); leaked.call('tool.list')\n"
    )
    crashes = [done.returncode for done in (run_python(code, {"PYTHONPATH": str(SRC_DIR)}) for _ in range(12))]
    assert crashes == [0] * 12


def test_file_store_survives_close_and_reopen(tmp_path: Path) -> None:
    config = {"store": str(tmp_path / "wf.sqlite"), **MANUAL_CLOCK}
    with Engine(config) as engine:
        engine.call("tool.register", TOOL_A)
        template = {
            "schema": "app.workflow/v2",
            "name": "one",
            "edges": [],
            "nodes": [{"id": "n", "kind": "A", "outputs": {"image": "ImageRef"}}],
        }
        template_id = engine.call("template.register", {"template": template})["templateId"]
        engine.call("clock.advance", {"seconds": 90})
    with Engine(config) as engine:
        assert engine.call("tool.get", {"kind": "A"})["outputs"] == {"image": "ImageRef"}
        assert [t["templateId"] for t in engine.call("template.list")["templates"]] == [template_id]
        assert engine.call("template.export", {"templateId": template_id})["template"]["name"] == "one"


@contextlib.contextmanager
def files_growing_refused() -> Iterator[None]:
    """A disk that refuses every new byte: RLIMIT_FSIZE 0 (SIGXFSZ ignored, so a write that would
    make a file larger fails with EFBIG), both put back after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old_handler)


def test_close_raises_store_error_when_the_disk_refuses_the_final_writes(tmp_path: Path) -> None:
    """wf_engine_close: the journal's last entries cannot be folded; close() raises StoreError
    (storeWriteFailed) and the engine is closed all the same; the next open replays the journal."""
    config = {"store": str(tmp_path / "wf.sqlite"), "backgroundWrites": False, **MANUAL_CLOCK}
    engine = Engine(config)
    engine.call("clock.advance", {"seconds": 90})
    with files_growing_refused(), pytest.raises(wf.StoreError) as raised:
        engine.close()
    assert raised.value.code == "storeWriteFailed"
    assert raised.value.details == {"store": config["store"], "durability": "normal"}
    assert engine.closed
    engine.close()  # closed already: nothing to report
    with Engine(config) as engine:
        assert engine.call("clock.now") == {"now": "2026-01-01T00:01:30.000Z"}


def test_a_failed_close_leaving_a_with_block_does_not_hide_the_exception_on_its_way_out(tmp_path: Path) -> None:
    """The with block's own exception wins over a failed close; without one, the close raises."""
    config = {"store": str(tmp_path / "wf.sqlite"), "backgroundWrites": False, **MANUAL_CLOCK}
    for own_error, expected in ((KeyError("the host's own error"), KeyError), (None, wf.StoreError)):
        engine = Engine(config)
        engine.call("clock.advance", {"seconds": 90})
        with pytest.raises(expected), files_growing_refused(), engine:
            if own_error is not None:
                raise own_error
        assert engine.closed
    with Engine(config) as engine:
        assert engine.call("clock.now") == {"now": "2026-01-01T00:03:00.000Z"}


def test_result_text_is_released_with_wf_free(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The library's text of every result is freed with wf_free, once (README: engine.call)."""
    spy = LibSpy()
    monkeypatch.setattr(ENGINE_MODULE, "lib", spy)
    assert engine.call("clock.now") == {"now": "2026-01-01T00:00:00.000Z"}
    assert engine.call_json("clock.advance", '{"seconds": 1}')["now"] == "2026-01-01T00:00:01.000Z"
    with pytest.raises(wf.NotFoundError):
        engine.call("tool.get", {"kind": "Nope"})
    assert len(spy.texts) == 3
    assert spy.texts[2] == ffi.NULL  # a failed call hands out no text
    assert spy.freed == spy.texts[:2]


def test_close_waits_for_a_call_in_flight_before_freeing(monkeypatch: pytest.MonkeyPatch) -> None:
    """close() from another thread returns only after a call in flight did, then frees the handle."""
    engine = Engine(MANUAL_CLOCK)
    entered, release = threading.Event(), threading.Event()
    spy = LibSpy()

    def slow_call_text(out: Any, *rest: Any) -> int:
        entered.set()
        release.wait(30)
        if "engine freed" in spy.events:  # the handle is gone: never call the library with it
            out[0] = ffi.NULL
            return int(wf.ESTATE)
        return LibSpy.wf_call_text(spy, out, *rest)

    spy.wf_call_text = slow_call_text  # type: ignore[method-assign]
    monkeypatch.setattr(ENGINE_MODULE, "lib", spy)
    results: list[Any] = []
    caller = threading.Thread(target=lambda: results.append(engine.call("clock.now")))
    caller.start()
    try:
        assert entered.wait(30)
        closer = threading.Thread(target=engine.close)
        closer.start()
        closer.join(0.5)
        assert closer.is_alive(), "close() returned while a call was in flight"
        assert spy.events == []
    finally:
        release.set()
        caller.join(30)
    closer.join(30)
    assert spy.events == ["call returned", "engine freed"]
    assert results == [{"now": "2026-01-01T00:00:00.000Z"}]
    assert engine.closed


# --------------------------------------------------------------------------- Python-side argument errors


@pytest.mark.parametrize("op", [None, 3, b"clock.now", ["clock.now"]])
def test_non_str_op_is_a_type_error(engine: Engine, op: Any) -> None:
    with pytest.raises(TypeError, match="op must be a str"):
        engine.call(op)


def test_op_with_nul_is_a_value_error(engine: Engine) -> None:
    with pytest.raises(ValueError, match="NUL"):
        engine.call("clock.now\0x")


def test_json_text_with_nul_is_a_value_error_and_changes_nothing(engine: Engine) -> None:
    before = engine.call("clock.now")
    with pytest.raises(ValueError, match="NUL"):
        engine.call_json("clock.advance", '{"seconds": 5}\0{"garbage":')
    assert engine.call("clock.now") == before


def test_args_nested_past_the_encoder_is_a_type_error(engine: Engine) -> None:
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(TypeError, match="cannot be serialised as JSON"):
        engine.call("clock.advance", {"seconds": deep})


@pytest.mark.parametrize("args", [[1], "seconds", 5, ("a", 1)])
def test_non_dict_args_is_a_type_error(engine: Engine, args: Any) -> None:
    with pytest.raises(TypeError, match="args must be a dict or None"):
        engine.call("clock.now", args)


@pytest.mark.parametrize("args", [{"x": object()}, {"x": {1, 2}}, {"x": float("nan")}, {"x": float("inf")}])
def test_args_that_are_not_json_are_a_type_error(engine: Engine, args: dict[str, Any]) -> None:
    with pytest.raises(TypeError, match="args cannot be serialised as JSON"):
        engine.call("clock.now", args)


def test_bad_config_types_are_type_errors() -> None:
    with pytest.raises(TypeError, match="config must be a dict or None"):
        Engine('{"store": ":memory:"}')  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="config cannot be serialised as JSON"):
        Engine({"seed": object()})


def test_call_json_rejects_non_str(engine: Engine) -> None:
    with pytest.raises(TypeError, match="args_json must be a str or None"):
        engine.call_json("clock.now", {"a": 1})  # type: ignore[arg-type]


# --------------------------------------------------------------------------- engine errors


def test_op_with_a_lone_surrogate_reaches_the_engine_as_invalid_utf8(engine: Engine) -> None:
    # Only a non-str op (TypeError) and NUL (ValueError) are refused on the Python side; the
    # bytes of any other str reach wf_call_text, which answers invalid UTF-8 itself.
    with pytest.raises(wf.InvalidError) as caught:
        engine.call("clock.\udcff")
    assert (caught.value.code, caught.value.details["argument"]) == ("invalidUTF8", "op")


def test_call_json_passes_a_lone_surrogate_through_unchanged(engine: Engine) -> None:
    # call_json passes the text unchecked: the engine sees the bytes and refuses them, rather
    # than a str codec error or a replacement character that would make the text valid.
    with pytest.raises(wf.InvalidError) as caught:
        engine.call_json("clock.now", '{"x": "\udcff"}')
    assert caught.value.code == "invalidUTF8"
    assert caught.value.details["argument"] == "args_json"


@pytest.mark.parametrize("status", [1, 7, -1, -77])
def test_check_error_raises_for_every_status_but_ok(status: int) -> None:
    with pytest.raises(wf.WorkflowError) as caught:
        wf.check_error(status)
    assert type(caught.value) is wf.WorkflowError
    assert caught.value.status == status



def test_invalid_error(engine: Engine) -> None:
    with pytest.raises(wf.InvalidError) as caught:
        engine.call("clock.advance", {"seconds": "soon"})
    error = caught.value
    assert (error.status, error.code) == (wf.EINVALID, "invalidArgument")
    assert error.details["argument"] == "seconds"
    assert isinstance(error, ValueError) and isinstance(error, wf.WorkflowError)
    assert str(error) == error.message and "seconds" in error.message


def test_malformed_json_text_is_invalid(engine: Engine) -> None:
    with pytest.raises(wf.InvalidError) as caught:
        engine.call_json("clock.now", "{")
    assert caught.value.code == "malformedJSON"
    assert caught.value.details == {"argument": "args_json", "offset": 1}
    with pytest.raises(wf.InvalidError, match="args_json must be a JSON object, not array"):
        engine.call_json("clock.now", "[1]")


def test_json_text_reports_nesting_and_bad_unicode_under_the_codes_of_a_json_t_argument(engine: Engine) -> None:
    # wf_call_text answers as wf_call does for a json_t: tooDeep and invalidUTF8, not malformedJSON.
    with pytest.raises(wf.InvalidError) as caught:
        engine.call_json("clock.now", '{"x": ' + "[" * 600 + "]" * 600 + "}")
    assert caught.value.code == "tooDeep"
    assert caught.value.details["argument"] == "args_json"
    with pytest.raises(wf.InvalidError) as caught:
        engine.call_json("clock.now", '{"x": "\\udcff"}')  # an escaped lone surrogate
    assert caught.value.code == "invalidUTF8"
    assert caught.value.details == {"argument": "args_json", "offset": 13}


def test_not_found_error_is_a_key_error_printing_its_message(engine: Engine) -> None:
    with pytest.raises(KeyError) as caught:
        engine.call("tool.get", {"kind": "Nope"})
    error = caught.value
    assert isinstance(error, wf.NotFoundError)
    assert (error.status, error.code, error.details) == (wf.ENOTFOUND, "unknownTool", {"kind": "Nope"})
    assert str(error) == "no tool 'Nope' is registered"  # not KeyError's quoted repr
    assert "status=WF_ENOTFOUND" in repr(error)


def test_state_error() -> None:
    with Engine() as engine:  # system clock: advancing it is not allowed
        with pytest.raises(wf.StateError) as caught:
            engine.call("clock.advance", {"seconds": 1})
    assert (caught.value.status, caught.value.code) == (wf.ESTATE, "clockNotManual")
    assert caught.value.details == {"mode": "system"}


def test_template_error_lists_every_error(engine: Engine) -> None:
    engine.call(
        "tool.register",
        {"kind": "K", "resourceClass": "local", "inputs": {"i": "ImageRef"}, "outputs": {"o": "ImageRef"}},
    )
    with pytest.raises(wf.TemplateError) as caught:
        engine.call("template.register", {"template": cyclic_template()})
    error = caught.value
    assert error.status == wf.ETEMPLATE
    codes = [e["code"] for e in error.details["errors"]]
    assert error.code == codes[0]
    assert "portTypeMismatch" in codes and "cycleDetected" in codes
    cycle = next(e for e in error.details["errors"] if e["code"] == "cycleDetected")
    assert cycle["cycle"] in (["a", "b", "a"], ["b", "a", "b"])


def test_unsupported_error(engine: Engine) -> None:
    with pytest.raises(wf.UnsupportedError) as caught:
        engine.call("no.such.op")
    assert (caught.value.status, caught.value.code, caught.value.details) == (
        wf.EUNSUPPORTED,
        "unknownOp",
        {"op": "no.such.op"},
    )


def test_store_error_on_open(tmp_path: Path) -> None:
    with pytest.raises(wf.StoreError) as caught:
        Engine({"store": str(tmp_path / "missing-dir" / "wf.sqlite")})
    assert (caught.value.status, caught.value.code) == (wf.ESTORE, "storeOpenFailed")
    assert caught.value.details == {"store": str(tmp_path / "missing-dir" / "wf.sqlite")}


def test_invalid_config_on_open() -> None:
    with pytest.raises(wf.InvalidError) as caught:
        Engine({"bogus": 1})
    assert caught.value.code == "unknownConfigKey"
    assert caught.value.details["argument"] == "config.bogus"


@pytest.mark.parametrize(
    "status, cls, extra_base",
    [
        (wf.EINVALID, wf.InvalidError, ValueError),
        (wf.ENOTFOUND, wf.NotFoundError, KeyError),
        (wf.ESTATE, wf.StateError, None),
        (wf.ETEMPLATE, wf.TemplateError, None),
        (wf.ECONFLICT, wf.ConflictError, None),
        (wf.ESTORE, wf.StoreError, None),
        (wf.EUNSUPPORTED, wf.UnsupportedError, None),
        (wf.ITEROVER, wf.IterOver, StopIteration),
        (wf.EINTERNAL, wf.InternalError, None),
        (-77, wf.WorkflowError, None),
    ],
)
def test_error_mapping_covers_every_status(status: int, cls: type, extra_base: type | None) -> None:
    """Statuses no current op produces (ECONFLICT, ITEROVER, EINTERNAL) go through the same map."""
    error = wf.error_for(status, "someCode", "a message", {"k": [1]})
    assert type(error) is cls
    assert (error.status, error.code, error.message, error.details) == (status, "someCode", "a message", {"k": [1]})
    assert str(error) == "a message"
    if extra_base is not None:
        assert isinstance(error, extra_base)
    else:
        assert not isinstance(error, (ValueError, KeyError, StopIteration))


def test_check_error_is_silent_on_ok() -> None:
    wf.check_error(wf.OK)  # raises nothing


def test_iter_over_ends_a_for_loop() -> None:
    class Pages:
        def __init__(self) -> None:
            self.left = 2

        def __iter__(self) -> Pages:
            return self

        def __next__(self) -> int:
            if not self.left:
                raise wf.error_for(wf.ITEROVER, "iterOver", "no more items", {})
            self.left -= 1
            return self.left

    assert list(Pages()) == [1, 0]


def test_errors_pickle_with_their_attributes() -> None:
    import pickle

    error = pickle.loads(pickle.dumps(wf.error_for(wf.ENOTFOUND, "unknownTool", "gone", {"kind": "X"})))
    assert (type(error), error.status, error.code, error.message, error.details) == (
        wf.NotFoundError,
        wf.ENOTFOUND,
        "unknownTool",
        "gone",
        {"kind": "X"},
    )


# --------------------------------------------------------------------------- threads


def test_threads_share_an_engine_and_keep_their_own_error_records(engine: Engine) -> None:
    threads, rounds = 8, 40
    barrier = threading.Barrier(threads)
    failures: list[str] = []

    def worker(n: int) -> None:
        barrier.wait()
        for i in range(rounds):
            kind = f"T{n}_{i}"
            try:
                engine.call("tool.register", {**TOOL_A, "kind": kind})
                engine.call("tool.get", {"kind": f"missing-{n}-{i}"})
                failures.append(f"{kind}: no error")
            except wf.NotFoundError as error:  # must be this thread's own record
                if error.details != {"kind": f"missing-{n}-{i}"}:
                    failures.append(f"{kind}: got {error.details}")
            try:
                engine.call("clock.advance", {"seconds": f"bad-{n}"})
            except wf.InvalidError as error:
                if (error.code, error.details.get("argument")) != ("invalidArgument", "seconds"):
                    failures.append(f"{kind}: got {error!r}")

    pool = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    assert failures == []
    assert len(engine.call("tool.list")["tools"]) == threads * rounds


def test_close_waits_for_calls_in_flight() -> None:
    engine = Engine(MANUAL_CLOCK)
    started = threading.Barrier(5)
    outcomes: list[str] = []

    def hammer() -> None:
        started.wait()
        while True:
            try:
                engine.call("tool.register", {**TOOL_A, "kind": f"K{threading.get_ident()}"})
            except wf.StateError as error:
                outcomes.append(error.code)
                return

    pool = [threading.Thread(target=hammer) for _ in range(4)]
    for thread in pool:
        thread.start()
    started.wait()
    engine.close()
    for thread in pool:
        thread.join(timeout=60)
    assert outcomes == ["engineClosed"] * 4


# --------------------------------------------------------------------------- reading the error record


ERRORS_MODULE = importlib.import_module("workflow_engine.errors")


class RecordLib:
    """Stands in for the ``lib`` of workflow_engine.errors: wf_error_last() returns a record
    made here, with the given fields, so check_error's reading of each field can be pinned."""

    def __init__(self, status: int, code: bytes, message: bytes, details_json: bytes) -> None:
        self.real = ERRORS_MODULE.lib
        self._texts = [ffi.new("char[]", code), ffi.new("char[]", message), ffi.new("char[]", details_json)]
        self.record = ffi.new("wf_error *")
        self.record.status = status
        self.record.code, self.record.message, self.record.details_json = self._texts
        self.record.details = ffi.NULL
        self.reads = 0

    def wf_error_last(self) -> Any:
        self.reads += 1
        return self.record

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def test_check_error_copies_code_message_and_details_from_the_record(monkeypatch: pytest.MonkeyPatch) -> None:
    stub = RecordLib(wf.ECONFLICT, b"alreadyClaimed", b"held by phone", b'{"claimant":"phone","n":[1,2.5]}')
    monkeypatch.setattr(ERRORS_MODULE, "lib", stub)
    with pytest.raises(wf.ConflictError) as caught:
        wf.check_error(wf.ECONFLICT)
    error = caught.value
    assert (error.status, error.code, error.message) == (wf.ECONFLICT, "alreadyClaimed", "held by phone")
    assert error.details == {"claimant": "phone", "n": [1, 2.5]}
    assert stub.reads == 1


@pytest.mark.parametrize(
    "details_json, details",
    [(b"[1, 2]", {"value": [1, 2]}), (b'"text"', {"value": "text"}), (b"null", {"value": None}), (b"", {})],
)
def test_check_error_keeps_details_that_are_not_an_object_under_value(
    monkeypatch: pytest.MonkeyPatch, details_json: bytes, details: dict[str, Any]
) -> None:
    monkeypatch.setattr(ERRORS_MODULE, "lib", RecordLib(wf.EINVALID, b"c", b"m", details_json))
    with pytest.raises(wf.InvalidError) as caught:
        wf.check_error(wf.EINVALID)
    assert caught.value.details == details


def test_check_error_survives_a_record_that_is_not_utf8(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever bytes the record holds, the failure is still a WorkflowError, never a UnicodeDecodeError."""
    monkeypatch.setattr(
        ERRORS_MODULE, "lib", RecordLib(wf.ESTORE, b"store\xffCorrupt", b"bad \xc3\x28 bytes", b'{"p":"\xff"}')
    )
    with pytest.raises(wf.StoreError) as caught:
        wf.check_error(wf.ESTORE)
    assert caught.value.code == "store\ufffdCorrupt"
    assert caught.value.message == "bad \ufffd( bytes"
    assert caught.value.details == {"p": "\ufffd"}


def test_check_error_uses_the_status_it_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """The returned status picks the class, even if the record (of another call) says otherwise."""
    monkeypatch.setattr(ERRORS_MODULE, "lib", RecordLib(wf.ENOTFOUND, b"c", b"m", b"{}"))
    with pytest.raises(wf.StateError) as caught:
        wf.check_error(wf.ESTATE)
    assert caught.value.status == wf.ESTATE


def test_message_quoting_a_nul_shows_it_as_a_question_mark(engine: Engine) -> None:
    """The library writes a U+0000 of a message as '?' (workflow.h, wf_error.message); the
    binding passes the message on whole and keeps the real text in details."""
    with pytest.raises(wf.InvalidError) as caught:
        engine.call("clock.now", {"a\0b": 1})
    assert caught.value.code == "unknownArgument"
    assert caught.value.message == "clock.now has no argument 'a?b'"
    assert caught.value.details["argument"] == "a\0b"


def test_numbers_keep_their_kind_through_the_binding(engine: Engine) -> None:
    xm = [4.0, -0.0, 2**63 - 1, -(2**63), 5, 0.1]
    template = {
        "schema": "app.workflow/v2",
        "name": "numbers",
        "nodes": [{"id": "n", "kind": "K", "outputs": {"o": "ImageRef"}}],
        "x-m": xm,
    }
    template_id = engine.call("template.register", {"template": template})["templateId"]
    back = engine.call("template.get", {"templateId": template_id})["template"]["x-m"]
    assert [type(v) for v in back] == [float, float, int, int, int, float]
    assert back == xm
    assert str(back[1]) == "-0.0"


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/self/maps (Linux)")
def test_library_stays_mapped_after_dlclose() -> None:
    """workflow.h: the library is linked with -z nodelete, so dlclose() does not unmap it, even
    when a host opens it without RTLD_NODELETE (here a bare cffi dlopen, not the binding's)."""
    library = os.environ.get("WF_LIBRARY") or str(REPO_ROOT / ".build/release/libworkflow.so")
    done = run_python(
        "import cffi\n"
        "ffi = cffi.FFI(); ffi.cdef('int wf_libversion_number(void);')\n"
        "lib = ffi.dlopen(%r, ffi.RTLD_NOW)\n"
        "assert lib.wf_libversion_number() > 0\n"
        "ffi.dlclose(lib)\n"
        "maps = open('/proc/self/maps').read()\n"
        "print('mapped' if 'libworkflow' in maps else 'unmapped')\n" % library
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "mapped"
