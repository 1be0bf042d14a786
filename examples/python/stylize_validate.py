#!/usr/bin/env python3
"""Validate and register the "Stylize with user mask" sample template.

The template is the one of shared/seeds/000_5e92a933bf273eed.txt, section 3. The script
registers the tools it uses (ImageLoader and CompressLocal run locally, StylizeRemote
remotely), validates the template and a broken variant (a port type mismatch that also
closes a cycle), registers the good one and prints its canonical export.

Exit status 0 only when the good template is valid and the broken one is not.
Runs from any directory; uses the installed workflow_engine package, or the repository's
bindings/python/src when it is not installed.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

try:
    import workflow_engine
except ModuleNotFoundError:  # not installed: use the repository's source tree
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bindings" / "python" / "src"))
    import workflow_engine

from workflow_engine import Engine

TOOLS: list[dict[str, Any]] = [
    {"kind": "ImageLoader", "resourceClass": "local", "inputs": {}, "outputs": {"image": "ImageRef"}},
    {
        "kind": "StylizeRemote",
        "resourceClass": "remote",
        "inputs": {"image": "ImageRef", "mask": "MaskRef"},
        "outputs": {"image": "ImageRef"},
        "summaryParams": ["steps", "cfg"],
    },
    {
        "kind": "CompressLocal",
        "resourceClass": "local",
        "inputs": {"image": "ImageRef"},
        "outputs": {"file": "FileRef"},
    },
]

SAMPLE: dict[str, Any] = {
    "schema": "app.workflow/v2",
    "name": "Stylize with user mask",
    "nodes": [
        {"id": "load1", "kind": "ImageLoader", "params": {"source": "photos"}, "outputs": {"image": "ImageRef"}},
        {
            "id": "mask1",
            "kind": "UserMaskEditor",
            "inputs": {"image": "ImageRef"},
            "outputs": {"mask": "MaskRef"},
            "await": {
                "type": "draw_mask",
                "blocking": True,
                "urgency": "normal",
                "expiresIn": "PT24H",
                "notification": {"title": "Draw a mask", "body": "Mask the subject for the next step."},
                "resumePolicy": {"onTimeout": "cancel"},
                "ui": "mask-sheet",
            },
        },
        {
            "id": "stylize1",
            "kind": "StylizeRemote",
            "params": {"steps": 30, "cfg": 4.0},
            "inputs": {"image": "ImageRef", "mask": "MaskRef"},
            "outputs": {"image": "ImageRef"},
            "resources": {"class": "remote"},
        },
        {
            "id": "compress1",
            "kind": "CompressLocal",
            "params": {"targetMB": 2},
            "inputs": {"image": "ImageRef"},
            "outputs": {"file": "FileRef"},
            "resources": {"class": "local"},
        },
    ],
    "edges": [
        {"from": ["load1", "image"], "to": ["mask1", "image"]},
        {"from": ["load1", "image"], "to": ["stylize1", "image"]},
        {"from": ["mask1", "mask"], "to": ["stylize1", "mask"]},
        {"from": ["stylize1", "image"], "to": ["compress1", "image"]},
    ],
    "options": {"concurrency": {"remote": 8, "local": 2}, "errorPolicy": "fail-fast"},
}


def broken_variant(template: dict[str, Any]) -> dict[str, Any]:
    """The sample with mask1's image fed by compress1's FileRef output instead of load1:
    a portTypeMismatch (FileRef into ImageRef) that also closes the cycle
    mask1 -> stylize1 -> compress1 -> mask1."""
    broken = copy.deepcopy(template)
    broken["name"] = "Stylize with user mask (broken)"
    broken["edges"][0] = {"from": ["compress1", "file"], "to": ["mask1", "image"]}
    return broken


def print_validation(label: str, validation: dict[str, Any]) -> None:
    print(f"{label}: {'valid' if validation['valid'] else 'INVALID'}")
    for kind in ("errors", "warnings"):
        for issue in validation.get(kind, []):
            where = "".join(f" {k}={issue[k]}" for k in ("nodeId", "port", "path") if k in issue)
            print(f"  {kind[:-1]} {issue['code']}:{where} {issue['message']}")


def main() -> int:
    with Engine({"clock": {"mode": "manual", "start": "2026-01-01T00:00:00.000Z"}}) as engine:
        print(f"workflow engine {engine.version} (binding {workflow_engine.__name__})")
        for tool in TOOLS:
            engine.call("tool.register", tool)
        good = engine.call("template.validate", {"template": SAMPLE})
        bad = engine.call("template.validate", {"template": broken_variant(SAMPLE)})
        print_validation("sample", good)
        print_validation("broken variant", bad)
        if good["valid"]:
            template_id = engine.call("template.register", {"template": SAMPLE})["templateId"]
            exported = engine.call("template.export", {"templateId": template_id})
            print(f"canonical export of {template_id}:")
            print((exported.get("text") or json.dumps(exported["template"], indent=2)).rstrip("\n"))
    return 0 if good["valid"] and not bad["valid"] else 1


if __name__ == "__main__":
    sys.exit(main())
