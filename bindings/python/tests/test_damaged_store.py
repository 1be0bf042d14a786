"""A store damaged behind the engine's back is refused or read, never a crash.

A file store built by random and fixture calls (``RandomHost``) is copied twice: once closed,
once while its engine is still open (what a killed process leaves: commits in the journal and
SQLite's log). Each seed damages a copy as another program or a failing disk would: a cell of a
table set to a value of another type or to its record text bent (a member dropped or changed,
bytes cut), a row deleted, bits flipped in the SQLite file or in the engine's journal. A child
process then opens it through the C ABI and reads everything a host can (every workflow, node,
run, asset, template and await), changes what it can (runs, cancels and retries nodes; archives,
duplicates and deletes workflows; claims, snoozes and skips awaits; touches and pins cached
files), answers the effects, and moves the clock on eight days.

It must either refuse the store with ``WF_ESTORE storeCorrupt`` or open it; every call must
answer with a result or a structured error other than ``WF_EINTERNAL``; and the process must
not crash. Records decode forgivingly (an unknown state or status takes a default, so a store a
newer library wrote still opens), so a record edited into a combination the rules never make
still loads; loading checks that nodes and runs are in step as the rules keep them and refuses
the workflow with ``storeCorrupt`` otherwise.

What this found, each pinned since by a test of its own (``StoreIntegrityTests``,
``ModelRoundTripTests``): GRDB's ``row[i]`` trapped on text in an integer column; formatting
``Int64.min`` as a time, a workflow's queue count at ``Int64.min``, a record's attempts at
``Int64.max`` and the journal's entry count at ``Int64.max`` overflowed; a cache entry of an
unknown variant stood in for the real preview; a node and its run out of step (a succeeded
node whose run failed, a node cut to read as blocked while its local run ran) made a later
call or the open fail with ``WF_EINTERNAL`` "illegal transition". ``WF_DAMAGE_SEEDS=N`` runs N
seeds instead of the suite's 48.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import SRC_DIR
from test_random_calls import RandomHost
from workflow_engine import Engine, WorkflowError

SEEDS = int(os.environ.get("WF_DAMAGE_SEEDS", "48"))
SUFFIXES = ("", "-wal", "-shm", "-wfjournal")
# Each table the engine keeps, and an expression naming one of its rows.
TABLES = {"meta": "key", "templates": "templateId", "tools": "kind", "provider_defaults": "kind",
          "workflows": "workflowId", "nodes": "workflowId || '/' || nodeId", "runs": "runId", "awaits": "awaitId",
          "assets": "assetId", "effects": "seq", "cache_entries": "assetId || '/' || variant", "metrics": "seq"}
ODD_VALUES: list[Any] = [0, -1, 2**31, -(2**63), 2**63 - 1, 1.5, "", "x", "null", "{}", "[]", "\u0000", "9" * 40,
                         "succeeded", "wf-1", "run-1", "as-1"]

READER = r"""
import json, random, sys
from workflow_engine import EINTERNAL, ESTORE, Engine, WorkflowError

try:
    engine = Engine({"store": sys.argv[1], "clock": {"mode": "manual", "start": "2026-01-01T00:00:00.000Z"}})
except WorkflowError as error:
    print(json.dumps({"refused": [error.status == ESTORE, error.code, str(error)]}))
    sys.exit(0)
internal = []
def call(op, args=None):
    try:
        return engine.call(op, args or {})
    except WorkflowError as error:
        if error.status == EINTERNAL or not (error.code and str(error)):
            internal.append([op, args, repr(error)])
        return {}
for op in ("engine.info", "scheduler.stats", "engine.nextDeadline", "tool.list", "badges.get", "cache.usage",
           "cache.entries", "metrics.take"):
    call(op)
rows = call("workflow.list", {"includeArchived": True}).get("rows", [])
for row in rows:
    wf = row.get("workflowId")
    call("workflow.detail", {"workflowId": wf})
    for node in call("workflow.get", {"workflowId": wf}).get("nodes", []):
        at = {"workflowId": wf, "nodeId": node["nodeId"]}
        call("node.get", at)
        for port in {port for run in call("node.history", at).get("runs", []) for port in run.get("inputs") or {}}:
            call("node.inputCandidates", {**at, "port": port})
        for asset in (node.get("outputs") or {}).values():
            call("asset.get", {"assetId": asset})
    call("workflow.runAllReady", {"workflowId": wf})
for template in call("template.list").get("templates", []):
    call("template.export", {"templateId": template["templateId"]})
awaits = call("await.list")
every_await = [item for section in ("pending", "snoozed", "done") for item in awaits.get(section, [])]
for item in every_await:
    call("await.get", {"awaitId": item["awaitId"]})
# Then change what can be changed: each node run, retried, cancelled or its params set; each
# workflow duplicated, archived, made active, paused or deleted; awaits claimed, snoozed or
# skipped; cached files touched and pinned; the effects answered.
rnd = random.Random(len(rows))
for row in rows:
    wf = {"workflowId": row.get("workflowId")}
    for node in call("workflow.get", wf).get("nodes", []):
        op = rnd.choice(["node.run", "node.retry", "node.cancel", "node.rerunLatest", "node.setParams"])
        call(op, {**wf, "nodeId": node["nodeId"], **({"params": {"x": 1}} if op == "node.setParams" else {})})
    op = rnd.choice(["workflow.duplicate", "workflow.archive", "workflow.setActive", "workflow.setPolling",
                     "workflow.delete"])
    call(op, {**wf, **({"archived": True} if op == "workflow.archive" else {}),
              **({"paused": True} if op == "workflow.setPolling" else {})})
for item in every_await:
    op = rnd.choice(["await.claim", "await.snooze", "await.skip"])
    call(op, {"awaitId": item["awaitId"], **({"claimant": "host"} if op == "await.claim" else {})})
for entry in call("cache.entries").get("entries", []):
    call("cache.touch", {"assetId": entry["assetId"], "variant": entry["variant"]})
    call("asset.pin", {"assetId": entry["assetId"], "pinned": True})
# An effect kept in the store is handed out as it was stored: a damaged one may lack members
# or hold other types, and is answered with whatever it holds.
for effect in call("effects.take").get("effects", []):
    kind, run, job = effect.get("type"), effect.get("runId"), effect.get("jobId")
    if kind == "local.run":
        call("local.completed", {"runId": run, "error": {"code": "E", "message": "damaged"}})
    elif kind == "remote.submit":
        call("job.submitted", {"runId": run, "jobId": f"job-{run}"})
    elif kind == "remote.poll":
        call("job.update", {"jobId": job, "status": "succeeded", "outputs": {}})
    elif kind == "remote.download":
        call("job.transportError", {"runId": run, "httpStatus": 503})
# Polls of jobs still in flight would fire every 10 s for the 8 days: paused, so the day
# timers (retention, expiry, purge) are what fires.
for row in call("workflow.list", {"includeArchived": True}).get("rows", []):
    call("workflow.setPolling", {"workflowId": row["workflowId"], "paused": True})
call("clock.advance", {"seconds": 8 * 86400})
call("assets.gc")
call("cache.freeUpSpace")
# The close's final writes (the journal folded, the log checkpointed) may find the damage too:
# a structured error, the engine closed all the same.
try:
    engine.close()
except WorkflowError as error:
    if error.status != ESTORE or error.code not in ("storeWriteFailed", "storeCorrupt") or not str(error):
        internal.append(["close", None, repr(error)])
print(json.dumps({"opened": len(rows), "internal": internal}))
"""


@pytest.fixture(scope="module")
def sound_stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The closed store, and the copy taken while its engine was open."""
    folder = tmp_path_factory.mktemp("damaged")
    closed, killed = folder / "closed.sqlite", folder / "killed.sqlite"
    host = RandomHost(3, str(closed))
    for _ in range(1_500):
        op, args = host.next_call()
        try:
            host.harvest(host.engine.call(op, args if isinstance(args, dict) else {"value": args}))
        except WorkflowError:
            pass
    for suffix in SUFFIXES:
        if Path(f"{closed}{suffix}").exists():
            shutil.copy(f"{closed}{suffix}", f"{killed}{suffix}")
    host.engine.close()
    with Engine({"store": str(closed)}) as engine:
        assert len(engine.call("workflow.list", {"includeArchived": True})["rows"]) >= 10, "too small a store to damage"
    return {"closed": closed, "killed": killed}


def bend_record(text: str, rnd: random.Random) -> str:
    """A record's text with one member dropped or changed, or some bytes cut."""
    try:
        record = json.loads(text)
    except ValueError:
        record = None
    if isinstance(record, (dict, list)) and record and rnd.random() < 0.6:
        places: list[tuple[Any, Any]] = []

        def walk(value: Any) -> None:
            members = value.items() if isinstance(value, dict) else enumerate(value)
            for key, member in list(members):
                places.append((value, key))
                if isinstance(member, (dict, list)):
                    walk(member)

        walk(record)
        parent, key = rnd.choice(places)
        if rnd.random() < 0.3:
            del parent[key]
        else:
            parent[key] = rnd.choice(ODD_VALUES + [[], {}, None, True])
        return json.dumps(record)
    cut = rnd.randrange(max(1, len(text)))
    return text[:cut] + text[cut + rnd.randint(1, 8):] if rnd.random() < 0.8 else text[:cut]


def damage_rows(path: Path, rnd: random.Random) -> str:
    with sqlite3.connect(path) as db:
        table = rnd.choice(sorted(TABLES))
        keys = [row[0] for row in db.execute(f"SELECT {TABLES[table]} FROM {table}")]
        if not keys:
            return f"nothing in {table}"
        key = rnd.choice(keys)
        where = f"WHERE {TABLES[table]} = ?"
        if rnd.random() < 0.1:
            db.execute(f"DELETE FROM {table} {where}", (key,))
            return f"{table} {key} deleted"
        columns = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
        column = "data" if "data" in columns and rnd.random() < 0.6 else rnd.choice(columns)
        old = db.execute(f"SELECT {column} FROM {table} {where}", (key,)).fetchone()[0]
        if isinstance(old, str) and old[:1] in "{[" and rnd.random() < 0.8:
            new = bend_record(old, rnd)
        else:
            new = rnd.choice(ODD_VALUES)
        try:
            db.execute(f"UPDATE {table} SET {column} = ? {where}", (new, key))
        except sqlite3.Error:  # a NOT NULL or UNIQUE column
            return f"{table}.{column} of {key} kept"
        return f"{table}.{column} of {key} = {new!r:.80}"


def flip_bits(path: Path, rnd: random.Random, count: int, skip: int) -> str:
    data = bytearray(path.read_bytes())
    spots = sorted(rnd.randrange(skip, len(data)) for _ in range(count)) if len(data) > skip else []
    for spot in spots:
        data[spot] ^= 1 << rnd.randrange(8)
    path.write_bytes(bytes(data))
    return f"bits flipped in {path.name} at {spots}"


@pytest.mark.parametrize("seed", range(SEEDS))
def test_a_damaged_store_is_refused_as_corrupt_or_read_never_a_crash_or_an_internal_error(
        seed: int, sound_stores: dict[str, Path], tmp_path: Path) -> None:
    rnd = random.Random(seed)
    source = sound_stores[rnd.choice(["closed", "killed"])]
    store = tmp_path / "store.sqlite"
    for suffix in SUFFIXES:
        if Path(f"{source}{suffix}").exists():
            shutil.copy(f"{source}{suffix}", f"{store}{suffix}")
    kind = rnd.random()
    journal = Path(f"{store}-wfjournal")
    if kind < 0.7:
        what = "; ".join(damage_rows(store, rnd) for _ in range(rnd.randint(1, 3)))
    elif kind < 0.85 or not journal.exists():
        what = flip_bits(store, rnd, rnd.randint(1, 10), skip=100)
    else:
        what = flip_bits(journal, rnd, rnd.randint(1, 4), skip=0)
    done = subprocess.run([sys.executable, "-c", READER, str(store)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(SRC_DIR), "SWIFT_BACKTRACE": "enable=no"})
    assert done.returncode == 0, f"seed {seed} ({source.name}, {what}): exit {done.returncode}\n{done.stderr[-3000:]}"
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    if "refused" in outcome:
        is_store_error, code, message = outcome["refused"]
        assert is_store_error and code == "storeCorrupt", \
            f"seed {seed} ({what}): refused with {code}: {message}"
    else:
        assert outcome["internal"] == [], f"seed {seed} ({what}): {outcome['internal'][:3]}"
