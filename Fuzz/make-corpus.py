"""Writes wf-fuzz-calls' seed corpus and dictionary from the conformance fixtures.

Each fixture is replayed on the Python host (the cffi binding), and the calls it made, its
``${variables}`` filled in, become one seed: a ``config`` line when the fixture configures its
engine (a temporary store file becomes ``"store":"file"``, which the harness replaces with a
file of its own), then one ``op args`` line per call, and ``reopen`` for a reopen (the harness
frees the engine and opens it again; a "crash" reopen becomes a clean one). The
dictionary lists the op names and every member name the fixtures use, so the fuzzer's mutations
produce calls the engine reads past its argument checks.

    python3 Fuzz/make-corpus.py CORPUS_DIR DICT_FILE [FIXTURE_DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import workflow_engine.conformance as conformance

DEFAULT_CONFIG = {"clock": {"mode": "manual", "start": "2026-01-01T00:00:00.000Z"}, "seed": 1, "logLevel": "error"}


def members(value: Any, into: set[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            into.add(key)
            members(item, into)
    elif isinstance(value, list):
        for item in value:
            members(item, into)


def main(argv: list[str]) -> int:
    corpus, dictionary = Path(argv[1]), Path(argv[2])
    fixtures = argv[3] if len(argv) > 3 else str(Path(__file__).resolve().parent.parent / "Tests/Conformance/fixtures")
    corpus.mkdir(parents=True, exist_ok=True)
    calls: list[str] = []
    real_outcome_of = conformance.outcome_of

    def recording_outcome_of(engine: Any, op: str, args: Any) -> dict[str, Any]:
        calls.append(op if args is None else f"{op} {json.dumps(args, ensure_ascii=False, separators=(',', ':'))}")
        return real_outcome_of(engine, op, args)

    real_reopen = conformance._Run.reopen

    def recording_reopen(run: Any, number: int, how: str) -> None:
        calls.append("reopen")  # the harness frees the engine and opens it again, as "clean" does
        real_reopen(run, number, how)

    conformance.outcome_of = recording_outcome_of
    conformance._Run.reopen = recording_reopen  # type: ignore[method-assign]
    ops: set[str] = set()
    keys: set[str] = set()
    written = 0
    for path in conformance.fixture_files([fixtures]):
        fixture = conformance.load_fixture(path)
        if not isinstance(fixture, dict) or not isinstance(fixture.get("steps"), list):
            continue
        calls.clear()
        conformance.run_fixture(fixture, path)  # pass or fail, its calls are a seed
        if not calls:
            continue
        config = dict(fixture.get("engine") or {})
        if config.get("store") == conformance.TEMPFILE:
            config["store"] = "file"  # the harness gives it a file of its own
        lines = [] if not config else [f"config {json.dumps({**DEFAULT_CONFIG, **config}, separators=(',', ':'))}"]
        lines += calls
        (corpus / (Path(path).stem[:100] + ".txt")).write_text("\n".join(lines) + "\n", encoding="utf-8")
        written += 1
        for step in fixture["steps"]:
            if isinstance(step, dict) and isinstance(step.get("op"), str):
                ops.add(step["op"])
                members(step.get("args"), keys)
    # libFuzzer's dictionary format escapes only \\ and \" (and \xNN): printable ASCII words only,
    # and none empty (a fixture may use "" as a key; libFuzzer refuses an empty word).
    printable = sorted(w for w in ops | keys if w and w.isascii() and w.isprintable())
    words = [json.dumps(w) for w in printable] + [json.dumps(json.dumps(k) + ":") for k in printable if k in keys]
    dictionary.write_text("".join(f"{w}\n" for w in words), encoding="utf-8")
    print(f"make-corpus: {written} seeds in {corpus}, {len(words)} words in {dictionary}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
