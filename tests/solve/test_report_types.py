"""The typed report: its JSON made and read only through the types, and described by the schema generated from them."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from digitise.errors import InputError
from digitise.notation.readings import load_readings
from digitise.solve import report_to_json, solve
from digitise.solve.report_types import Report, schema, schema_text

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
SCHEMA = ROOT / "docs" / "report.schema.json"
READINGS = sorted(DATA.glob("*.readings.json"))


def test_the_committed_schema_is_the_one_the_types_make() -> None:
    assert SCHEMA.read_text(encoding="utf-8") == schema_text(), (
        "docs/report.schema.json is out of date: write it again with python -c \"from "
        "digitise.solve.report_types import schema_text; open('docs/report.schema.json', 'w').write(schema_text())\"")
    jsonschema.Draft202012Validator.check_schema(schema())


@pytest.mark.parametrize("path", READINGS[:4], ids=lambda p: p.name.removesuffix(".readings.json"))
def test_a_solved_report_validates_and_reads_back_as_it_was(path: Path) -> None:
    result = solve(load_readings(path))
    doc = json.loads(report_to_json(result.report))
    jsonschema.validate(doc, schema())
    # Read back through the types, the same values; written again, the same text.
    assert Report.from_json(doc) == result.solved
    assert report_to_json(Report.from_json(doc)) == report_to_json(result.report)


def test_a_scans_own_keys_are_allowed_but_the_solves_are_checked() -> None:
    doc = solve(load_readings(READINGS[0])).report
    jsonschema.validate({**doc, "sources": ["page-001.jpg"], "scan_notes": []}, schema())
    turn = doc["games"][0]["turns"][0]
    bad = {**doc, "games": [{**doc["games"][0], "turns": [{**turn, "player": "left"}]}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema())
    with pytest.raises(InputError, match=r"\$\.games\[0\]\.turns\[0\]\.player: 'left' is not one of"):
        Report.from_json(bad)
    with pytest.raises(InputError, match="summary is missing"):
        Report.from_json({"games": [], "skipped": []})


def test_a_report_written_before_reasons_had_codes_reads_with_them() -> None:
    doc = solve(load_readings(READINGS[0])).report
    flagged = [t for g in doc["games"] for t in g["turns"] if t["reasons"]]
    assert flagged
    old = json.loads(json.dumps(doc))
    for game in old["games"]:
        for turn in game["turns"]:
            del turn["reason_codes"]
    del old["note_codes"]
    assert Report.from_json(old) == Report.from_json(doc)
