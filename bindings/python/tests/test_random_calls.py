"""Random and malformed calls through the C ABI (the text functions, as every FFI host uses them).

The calls are the steps of the conformance fixtures, their ``${variables}`` filled with ids the
engine has handed out in this run (workflows, runs, jobs, awaits, assets, ...), and half of them
bent: a value replaced by an edge case (huge, negative or fractional numbers, empty, long or odd
strings, the wrong type, ``null``), a member dropped or added, a batch of several. Whatever the
call, the engine must answer with a result or a structured error: never crash, never
``WF_EINTERNAL``; and a call that fails must change nothing a host can see (the workflows with
their nodes, runs, awaits and cards, the inbox and badges, the queues, the cache, the clock and
the next deadline). On a file store the engine is also closed and reopened now and then: with no
local run running, the reopened engine must show exactly what the closed one showed.

Seeded, so a failure replays: the assertion message lists the calls that led to it.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES_DIR
from workflow_engine import EINTERNAL, Engine, WorkflowError

CALLS_PER_SEED = 2_500

EDGE_NUMBERS: list[Any] = [0, -1, 1, 65_536, -(2**31), 2**53, 2**63 - 1, -(2**63), 2**63, 2**64, 10**30, -(10**30),
                           1e308, -1e308, 0.5, -0.5, 1e-300, 3.999999, 86400 * 365 * 10000, 9.3e18]
EDGE_STRINGS = ["", " ", "x" * 10_000, "\u0000", "é", "😀", "../../etc/passwd", "wf-1", "a → b",
                "2026-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "0000-01-01T00:00:00.000Z", "PT24H",
                "P99999999999999D", "-PT1H", "app://workflow/wf-1/node/n?await=x", "app://", "%zz", "null"]
# Members whose string values are ids worth reusing in later calls.
ID_KEYS = ("id", "uri", "claimant", "kind", "port", "url")
VARIABLE = re.compile(r"\$\{([^}]+)\}")


def fixture_calls() -> list[tuple[str, dict[str, Any]]]:
    calls = []
    for path in sorted(Path(FIXTURES_DIR).rglob("*.json")):
        for step in json.loads(path.read_text()).get("steps", []):
            if isinstance(step, dict) and isinstance(step.get("op"), str):
                calls.append((step["op"], step.get("args") or {}))
    return calls


class RandomHost:
    def __init__(self, seed: int, store: str) -> None:
        self.rnd = random.Random(seed)
        self.config = {"store": store, "clock": {"mode": "manual", "start": "2026-01-01T00:00:00.000Z"}, "seed": seed}
        self.engine = Engine(self.config)
        self.pool: dict[str, set[str]] = {}
        self.calls = fixture_calls()
        self.history: list[dict[str, Any]] = []

    # What the engine hands out, by member name.
    def harvest(self, value: Any) -> None:
        if isinstance(value, dict):
            for key, member in value.items():
                if isinstance(member, str) and (key.endswith("Id") or key in ID_KEYS):
                    self.pool.setdefault(key, set()).add(member)
                self.harvest(member)
        elif isinstance(value, list):
            for member in value:
                self.harvest(member)

    def any_id(self) -> str:
        every = sorted(v for ids in self.pool.values() for v in ids)
        return self.rnd.choice(every) if every else "none"

    def fill(self, value: Any, key: str | None = None) -> Any:
        if isinstance(value, str):
            if VARIABLE.fullmatch(value):
                known = sorted(self.pool.get(key or "", ()))
                return self.rnd.choice(known) if known and self.rnd.random() > 0.05 else self.any_id()
            return VARIABLE.sub(lambda _: self.any_id(), value)
        if isinstance(value, dict):
            return {k: self.fill(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.fill(v, key) for v in value]
        return value

    def edge(self, depth: int = 0) -> Any:
        r = self.rnd.random()
        if r < 0.35:
            return self.rnd.choice(EDGE_NUMBERS)
        if r < 0.6:
            return self.rnd.choice(EDGE_STRINGS)
        if r < 0.75:
            return self.any_id()
        if r < 0.8:
            return None
        if r < 0.85:
            return self.rnd.choice([True, False])
        if depth < 3 and r < 0.92:
            return [self.edge(depth + 1) for _ in range(self.rnd.randint(0, 3))]
        if depth < 3:
            keys = ["a", "type", "uri", "asset", "choice", "params", "x-y", ""]
            return {self.rnd.choice(keys): self.edge(depth + 1) for _ in range(self.rnd.randint(0, 3))}
        return 1

    def bend(self, value: Any, depth: int = 0) -> Any:
        """One change somewhere in `value`: a member replaced, dropped, added or repeated."""
        if isinstance(value, dict) and value and (depth == 0 or self.rnd.random() < 0.8):
            key = self.rnd.choice(sorted(value))
            out = dict(value)
            r = self.rnd.random()
            if r < 0.1:
                del out[key]
            elif r < 0.15:
                out[self.rnd.choice(["bogus", "x-extra", key + "s"])] = self.edge()
            elif r < 0.6 and isinstance(value[key], (dict, list)):
                out[key] = self.bend(value[key], depth + 1)
            else:
                out[key] = self.edge()
            return out
        if isinstance(value, list) and value and self.rnd.random() < 0.8:
            out = list(value)
            i = self.rnd.randrange(len(out))
            r = self.rnd.random()
            if r < 0.1:
                del out[i]
            elif r < 0.2:
                out.append(out[i])
            elif isinstance(out[i], (dict, list)):
                out[i] = self.bend(out[i], depth + 1)
            else:
                out[i] = self.edge()
            return out
        return self.edge()

    def next_call(self) -> tuple[str, Any]:
        op, args = self.rnd.choice(self.calls)
        args = self.fill(args)
        if self.rnd.random() < 0.5:
            for _ in range(self.rnd.randint(1, 3)):
                args = self.bend(args)
        if self.rnd.random() < 0.05:
            inner = []
            for _ in range(self.rnd.randint(0, 4)):
                inner_op, inner_args = self.rnd.choice(self.calls)
                inner.append({"op": inner_op, "args": self.fill(inner_args)})
            op, args = "batch", {"calls": inner}
            if self.rnd.random() < 0.5:
                args = self.bend(args)
        if self.rnd.random() < 0.02:
            op = self.rnd.choice(["", "x", "batch", "workflow.get.", "WORKFLOW.GET"])
        return op, args

    def visible_state(self, every_workflow: bool = False) -> dict[str, Any]:
        """What a host sees, through read-only ops: everything, or the first six workflows."""
        seen = {}
        for op, args in (("workflow.list", {"includeArchived": True}), ("await.list", {}), ("scheduler.stats", {}),
                         ("cache.usage", {}), ("cache.entries", {}), ("template.list", {}), ("tool.list", {}),
                         ("clock.now", {}), ("engine.nextDeadline", {}), ("badges.get", {})):
            seen[op] = self.engine.call(op, args)
        rows = seen["workflow.list"]["rows"]
        for row in rows if every_workflow else rows[:6]:
            for op in ("workflow.get", "workflow.detail"):
                seen[f"{op} {row['workflowId']}"] = self.engine.call(op, {"workflowId": row["workflowId"]})
        return seen

    def reopen(self) -> None:
        """Closes and reopens the store. When no local run was running (a reopen interrupts
        those, and the slots they free may start queued work), nothing a host sees may differ."""
        before = self.visible_state(every_workflow=True)
        self.history.append({"op": "(close and reopen)"})
        self.engine.close()
        self.engine = Engine(self.config)
        if before["scheduler.stats"]["local"]["running"] == 0:
            assert self.visible_state(every_workflow=True) == before, \
                f"a reopen changed what a host sees; {self.replay_note()}"

    def replay_note(self) -> str:
        return "the last calls:\n" + "\n".join(json.dumps(c)[:600] for c in self.history[-12:])

    def run(self, calls: int, reopen: bool) -> dict[str, int]:
        outcomes: dict[str, int] = {}
        for _ in range(calls):
            op, args = self.next_call()
            if not isinstance(args, dict):
                args = {"value": args}
            self.history.append({"op": op, "args": args})
            check = self.rnd.random() < 0.25
            before = self.visible_state() if check else None
            try:
                result = self.engine.call(op, args)
            except WorkflowError as error:
                outcomes[error.code] = outcomes.get(error.code, 0) + 1
                assert error.status != EINTERNAL, f"WF_EINTERNAL {error!r}; {self.replay_note()}"
                assert error.status < 0 and error.code and error.message and isinstance(error.details, dict), \
                    f"unstructured error {error!r}; {self.replay_note()}"
                if check:
                    assert self.visible_state() == before, \
                        f"the failing call ({error.code}) changed what a host sees; {self.replay_note()}"
            else:
                outcomes["ok"] = outcomes.get("ok", 0) + 1
                self.harvest(result)
            if reopen and self.rnd.random() < 0.02:
                self.reopen()
        self.engine.close()
        return outcomes


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_random_and_malformed_calls_never_crash_never_fail_internally_and_failing_calls_or_reopens_change_nothing(
        seed: int, tmp_path: Path) -> None:
    file_store = seed % 2 == 1
    store = str(tmp_path / "random.sqlite") if file_store else ":memory:"
    outcomes = RandomHost(seed, store).run(CALLS_PER_SEED, reopen=file_store)
    # The drive reaches the engine's rules, not only its argument checks.
    assert outcomes.get("ok", 0) >= CALLS_PER_SEED // 5, outcomes
    assert len(outcomes) >= 10, outcomes


def test_a_provider_report_for_a_local_run_is_refused_and_the_clock_still_advances(engine: Engine) -> None:
    """Found by the random calls: a transport error for a running local run scheduled a poll that
    could never be sent, and every later clock.advance spun on it and failed with WF_EINTERNAL."""
    engine.call("tool.register", {"kind": "Loader", "resourceClass": "local", "inputs": {},
                                  "outputs": {"image": "ImageRef"}})
    template = {"schema": "app.workflow/v2", "name": "one local",
                "nodes": [{"id": "load1", "kind": "Loader", "outputs": {"image": "ImageRef"}}], "edges": []}
    template_id = engine.call("template.register", {"template": template})["templateId"]
    workflow_id = engine.call("workflow.create", {"templateId": template_id})["workflowId"]
    run_id = engine.call("node.run", {"workflowId": workflow_id, "nodeId": "load1"})["runId"]
    with pytest.raises(WorkflowError) as refused:
        engine.call("job.transportError", {"runId": run_id, "httpStatus": 503})
    assert (refused.value.code, refused.value.details) == ("notRemote", {"runId": run_id, "mode": "local"})
    assert engine.call("clock.advance", {"seconds": 94}) == {"now": "2026-01-01T00:01:34.000Z", "fired": 0}
