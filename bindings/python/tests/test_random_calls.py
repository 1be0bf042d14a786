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

After a call that succeeds, now and then, what the engine keeps up to date call by call is
checked against what it is kept from (``RandomHost.broken_invariants``): the list's rows and the
badges against the workflows and their awaits, ``scheduler.stats`` against the runs
(``node.history``) and the caps, no queued run left waiting while its queue and its workflow have
a slot free, a known reason on every blocked node, and ``engine.nextDeadline``: advancing the
clock to it fires something.

Seeded, so a failure replays: the assertion message lists the calls that led to it.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import threading
from datetime import datetime
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
NODE_STATES = {"blocked", "ready", "awaitingUser", "queuedRemote", "runningRemote", "runningLocal", "downloading",
               "succeeded", "failed", "cancelled", "skipped"}
BLOCKED_REASONS = {"waitingForInput", "inputChanged", "upstreamFailed", "toolNotInstalled", "offline"}
TERMINAL_RUNS = {"succeeded", "failed", "cancelled", "skipped"}
# Run statuses that hold a slot of their queue (a remote run gives its slot back when the provider
# reports success, before its outputs are downloaded).
SLOT_HOLDING = {"local": {"running"}, "remote": {"submitting", "retryWait", "submitted", "running"}}


# The longest clock.advance the drive takes from the fixtures. A valid advance of years (the
# range fixture's 3,153,600,000 s) fires every live job's polls all the way (OPS clock.advance:
# minutes with jobs in flight), so the drive keeps to the spans the other fixtures use.
LONGEST_ADVANCE = 30 * 86_400


def fixture_calls() -> list[tuple[str, dict[str, Any]]]:
    calls = []
    for path in sorted(Path(FIXTURES_DIR).rglob("*.json")):
        for step in json.loads(path.read_text()).get("steps", []):
            if isinstance(step, dict) and isinstance(step.get("op"), str):
                args = step.get("args") or {}
                seconds = args.get("seconds") if step["op"] == "clock.advance" and isinstance(args, dict) else None
                if isinstance(seconds, (int, float)) and LONGEST_ADVANCE < seconds <= 3_153_600_000:
                    continue
                calls.append((step["op"], args))
    return calls


def parse_time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")


class RandomHost:
    def __init__(self, seed: int, store: str, **config: Any) -> None:
        self.rnd = random.Random(seed)
        self.config = {"store": store, "clock": {"mode": "manual", "start": "2026-01-01T00:00:00.000Z"}, "seed": seed,
                       **config}
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

    def broken_invariants(self) -> list[str]:
        """What the engine keeps call by call (list rows, badges, queue counts), checked against
        what it is kept from (the workflows, their awaits and runs), and the rules on queues."""
        call = self.engine.call
        broken: list[str] = []
        stats, badges = call("scheduler.stats", {}), call("badges.get", {})
        counted = {queue: {"running": 0, "queued": 0} for queue in ("remote", "local")}
        per_workflow: dict[str, dict[str, dict[str, int]]] = {}
        workflow_caps: dict[str, dict[str, int]] = {}
        for row in call("workflow.list", {"includeArchived": True})["rows"]:
            wid = row["workflowId"]
            wf = call("workflow.get", {"workflowId": wid})
            for key in ("title", "status", "stepsDone", "stepsTotal", "updatedAt", "archived", "templateId"):
                if row[key] != wf[key]:
                    broken.append(f"{wid}: workflow.list says {key} {row[key]!r}, workflow.get {wf[key]!r}")
            pending = sum(1 for a in wf["awaits"] if a["status"] == "pending")
            blocking = any(a["status"] != "done" and a["blocking"] for a in wf["awaits"])
            if (row["awaitCount"], badges["workflows"].get(wid, 0)) != (pending, pending):
                broken.append(f"{wid}: awaitCount {row['awaitCount']}, badge {badges['workflows'].get(wid, 0)}, "
                              f"{pending} awaits pending")
            if (row["hasBlockingAwait"], badges["blocking"].get(wid, False)) != (blocking, blocking):
                broken.append(f"{wid}: hasBlockingAwait {row['hasBlockingAwait']}, badges.blocking "
                              f"{badges['blocking'].get(wid, False)}, an open blocking await: {blocking}")
            template = call("template.get", {"templateId": wf["templateId"]})["template"]
            workflow_caps[wid] = (template.get("options") or {}).get("concurrency") or {}
            mine = per_workflow[wid] = {queue: {"running": 0, "queued": 0} for queue in ("remote", "local")}
            for node in wf["nodes"]:
                where = f"{wid}/{node['nodeId']}"
                if node["state"] not in NODE_STATES:
                    broken.append(f"{where}: unknown state {node['state']!r}")
                reason = node.get("blockedReason")
                if node["state"] == "blocked" and not (reason and reason["code"] in BLOCKED_REASONS and reason["message"]):
                    broken.append(f"{where}: blocked with reason {reason!r}")
                runs = call("node.history", {"workflowId": wid, "nodeId": node["nodeId"]})["runs"]
                live = [r for r in runs if r["status"] not in TERMINAL_RUNS]
                if len(live) > 1:
                    broken.append(f"{where}: {len(live)} runs not finished")
                for r in live:
                    if r["mode"] not in counted:
                        continue  # interactive: no queue
                    key = "queued" if r["status"] == "queued" else "running" if r["status"] in SLOT_HOLDING[r["mode"]] else None
                    if key:
                        counted[r["mode"]][key] += 1
                        mine[r["mode"]][key] += 1
        for queue in ("remote", "local"):
            reported = {"running": stats[queue]["running"], "queued": stats[queue]["queued"]}
            if reported != counted[queue]:
                broken.append(f"scheduler.stats {queue} {reported}, the runs {counted[queue]}")
            if stats[queue]["running"] > stats[queue]["cap"]:
                broken.append(f"{queue}: {stats[queue]['running']} running over the cap {stats[queue]['cap']}")
            if stats[queue]["running"] < stats[queue]["cap"] and (queue == "local" or stats["online"]):
                for wid, mine in per_workflow.items():
                    cap = workflow_caps[wid].get(queue)
                    if mine[queue]["queued"] and (cap is None or mine[queue]["running"] < cap):
                        broken.append(f"{wid}: {mine[queue]['queued']} {queue} runs queued with a slot free "
                                      f"(the workflow runs {mine[queue]['running']}, cap {cap}; {stats[queue]})")
        return broken

    def advance_to_next_deadline(self) -> None:
        """A deadline the engine reports is one where something fires."""
        at = self.engine.call("engine.nextDeadline", {})["at"]
        if at is None:
            return
        now = self.engine.call("clock.now", {})["now"]
        seconds = (parse_time(at) - parse_time(now)).total_seconds()
        self.history.append({"op": "clock.advance", "args": {"seconds": seconds}})
        fired = self.engine.call("clock.advance", {"seconds": seconds})["fired"]
        assert fired >= 1, f"nothing fired at the next deadline {at} (now {now}); {self.replay_note()}"

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
                if self.rnd.random() < 0.1:
                    broken = self.broken_invariants()
                    assert not broken, f"after {op}: " + "; ".join(broken[:5]) + f"; {self.replay_note()}"
                if self.rnd.random() < 0.03:
                    self.advance_to_next_deadline()
            if reopen and self.rnd.random() < 0.02:
                self.reopen()
        self.engine.close()
        return outcomes


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_random_and_malformed_calls_never_crash_or_fail_internally_keep_counts_true_and_failing_calls_or_reopens_change_nothing(
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


def answers_of(seed: int, calls: int, store: str = ":memory:", **config: Any) -> str:
    """Every answer to a seed's calls, and now and then everything a host sees, as JSON lines
    (a file store's path, which `engine.info` shows, written as ":memory:")."""
    host = RandomHost(seed, store, **config)
    lines = []
    for i in range(calls):
        op, args = host.next_call()
        try:
            answer: Any = {"ok": host.engine.call(op, args if isinstance(args, dict) else {"value": args})}
            host.harvest(answer["ok"])
        except WorkflowError as error:
            answer = {"error": [error.status, error.code, error.message, error.details]}
        if i % 10 == 0:
            answer["seen"] = host.visible_state(every_workflow=True)
        lines.append(json.dumps(answer))  # key order as the engine gave it
    host.engine.close()
    return "\n".join(lines).replace(json.dumps(store), '":memory:"')


def assert_same_answers(one: str, other: str) -> None:
    first, second = one.splitlines(), other.splitlines()
    assert len(first) == len(second) == 1500
    differ = next((i for i, (a, b) in enumerate(zip(first, second)) if a != b), None)
    if differ is not None:  # the first answer that differs, where it does; not a diff of megabytes
        a, b = first[differ], second[differ]
        at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        pytest.fail(f"answer {differ} differs at character {at}:\n…{a[max(0, at - 300):at + 300]}\n…{b[max(0, at - 300):at + 300]}")


ANSWERS_SCRIPT = """
import sys
sys.path[:0] = sys.argv[1:3]
from test_random_calls import answers_of
sys.stdout.write(answers_of(int(sys.argv[3]), int(sys.argv[4])))
"""


@pytest.mark.parametrize("seed", [11, 12])
def test_the_same_calls_give_the_same_answers_in_another_process(seed: int) -> None:
    """Swift seeds its hashing afresh in every process: an answer whose order or content came
    from iterating a Set or a Dictionary would differ between two runs of the same calls. With a
    manual clock and a seed, the engine is a function of its calls, to the byte."""
    tests_dir = str(Path(__file__).resolve().parent)
    src_dir = str(Path(__file__).resolve().parents[1] / "src")
    runs = [subprocess.run([sys.executable, "-c", ANSWERS_SCRIPT, tests_dir, src_dir, str(seed), "1500"],
                           capture_output=True, text=True, check=True).stdout for _ in range(2)]
    assert_same_answers(runs[0], runs[1])


def test_a_file_store_answers_exactly_as_an_in_memory_store(tmp_path: Path) -> None:
    """The store is not the engine's state: a file store's journal, the thread folding it into
    the tables, and workflows read back from those tables (every done one dropped from memory
    after each call) must change no answer to the same calls. Compared on the first seed whose
    calls finish workflows (which seeds do depends on the fixtures the calls are drawn from)."""
    for seed in range(1, 61):
        in_memory = answers_of(seed, 1500)
        if finished_workflows(in_memory):
            store = str(tmp_path / f"same-{seed}.sqlite")
            assert_same_answers(in_memory, answers_of(seed, 1500, store, memory={"doneWorkflows": 0}))
            return
    pytest.fail("none of 60 seeds finishes a workflow")


def finished_workflows(answers: str) -> set[str]:
    return {row["workflowId"] for line in answers.splitlines()
            for row in json.loads(line).get("seen", {}).get("workflow.list", {}).get("rows", []) if row["status"] == "done"}


def test_done_workflows_dropped_from_memory_and_read_again_from_the_store_change_no_answer() -> None:
    """With `memory.doneWorkflows` 0, every done workflow leaves memory after each call and is
    read from the store when next needed: the engine must answer exactly as when it keeps them.
    Compared on the first two seeds whose calls finish workflows (which seeds do depends on the
    fixtures the calls are drawn from)."""
    compared = 0
    for seed in range(1, 61):
        kept = answers_of(seed, 1500)
        if not finished_workflows(kept):
            continue
        assert_same_answers(kept, answers_of(seed, 1500, memory={"doneWorkflows": 0}))
        compared += 1
        if compared == 2:
            return
    pytest.fail(f"only {compared} of 60 seeds finish a workflow")


def test_random_calls_from_four_threads_on_one_engine_never_fail_internally_and_leave_every_count_true(
        tmp_path: Path) -> None:
    """Calls on one engine are serialised inside it (workflow.h, "Thread safety"): four threads
    making random calls at once get answers or structured errors, and leave the engine's
    counts agreeing with its records, before and after a reopen."""
    owner = RandomHost(21, str(tmp_path / "threads.sqlite"))
    callers = [RandomHost(2100 + i, ":memory:") for i in range(4)]
    failures: list[str] = []
    answered = [0] * len(callers)

    def make_calls(host: RandomHost) -> None:
        for _ in range(1_000):
            op, args = host.next_call()
            try:
                host.harvest(owner.engine.call(op, args if isinstance(args, dict) else {"value": args}))
                answered[callers.index(host)] += 1
            except WorkflowError as error:
                if error.status == EINTERNAL or not (error.code and error.message):
                    failures.append(f"{op}: {error!r}")
            except Exception as error:  # anything else is a failure to report
                failures.append(f"{op}: {error!r}")

    for host in callers:
        host.engine.close()
    threads = [threading.Thread(target=make_calls, args=(host,)) for host in callers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures[:5]
    assert min(answered) >= 200, answered  # the calls reach the engine's rules
    assert not owner.broken_invariants()
    owner.reopen()
    assert not owner.broken_invariants()
    owner.engine.close()
