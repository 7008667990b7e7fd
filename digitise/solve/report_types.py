"""The report of a solved match as typed values, and its JSON: written, read back, and described by a schema.

The report's JSON (see :mod:`digitise.solve` for what each key means) is
made only here, from these types: :meth:`Report.to_json` at the edge where
the report is written, :meth:`Report.from_json` where one is read, and
:func:`schema` (committed as ``docs/report.schema.json``) generated from the
same types. A list of :class:`~digitise.solve.reasons.Flag` is written as two
lists side by side: its texts under the field's name and its codes beside
them (``reasons`` and ``reason_codes``, ``notes`` and ``note_codes``). A
field whose default is ``None`` is left out of the JSON when it is ``None``;
every other field is always written (``null`` where it has no value).
"""

from __future__ import annotations

import dataclasses
import json
import types
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from digitise.errors import InputError
from digitise.solve.reasons import CODES_KEY, Flag, Reason, codes_of, reason_by_code, reason_of

SideName = Literal["bottom", "top"]
TurnAction = Literal["move", "double", "take", "drop", "resign"]


@dataclass(frozen=True, slots=True)
class Place:
    """A board where it is written: its page's number and its place on the page (1..8)."""

    page: int
    board: int


@dataclass(frozen=True, slots=True)
class Result:
    """What a candidate's result square says: who won the game, and how many points."""

    winner: SideName | None
    points: int


@dataclass(frozen=True, slots=True)
class Candidate:
    """One of the best few decisions for a board, with its probability among them and how it compares."""

    action: Literal["move", "double", "resign", "letters", "blank"]
    #: ``.mat`` notation, "" for none.
    move: str
    #: [high, low], or ``None``.
    dice: tuple[int, int] | None
    #: Who decides: for a move or a double only.
    player: SideName | None = None
    #: For a double, the answer given on its own board; else the answer to the double of the board before.
    answer: Literal["take", "drop"] | None = None
    result: Result | None = None
    probability: float = 0.0
    #: How it compares with the decision taken ("marks fit 3.2x better", ...), biggest factor first.
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Turn:
    """A turn of a game: where it is written, what it records, and how sure the solver is of it."""

    page: int
    board: int
    player: SideName
    action: TurnAction
    dice: tuple[int, int] | None
    move: str
    #: A resignation's points, else ``None``.
    points: int | None
    confidence: float
    flagged: bool
    reasons: tuple[Flag, ...]
    candidates: tuple[Candidate, ...]
    #: An earlier flagged board this turn's position rests on.
    follows: Place | None
    position_before: str | None
    position_after: str | None


@dataclass(frozen=True, slots=True)
class Skipped:
    """A board that records no turn but is flagged (a blank board inside a game, a page left out)."""

    page: int
    board: int
    flagged: bool
    reasons: tuple[Flag, ...]


@dataclass(frozen=True, slots=True)
class Game:
    """A game of the match: its turns, and who won how many points (``None`` where the readings do not finish it)."""

    number: int
    turns: tuple[Turn, ...]
    winner: SideName | None
    points: int | None


@dataclass(frozen=True, slots=True)
class Summary:
    """The match in figures: what the review page lists and the exit code follows."""

    boards: int
    games: int
    turns: int
    #: Turns and boards set aside that are flagged.
    flagged: int
    set_aside: int
    mean_confidence: float


@dataclass(frozen=True, slots=True)
class Report:
    """The report of a solved match (a scan adds keys of its own to its JSON: the page files, its notes, ...)."""

    games: tuple[Game, ...]
    skipped: tuple[Skipped, ...]
    summary: Summary
    #: What weighed the plays (GNU Backgammon's net, or nothing).
    prior: str | None = None
    #: Doubts about the whole match.
    notes: tuple[Flag, ...] = ()
    #: Turns of a player on the bar against a closed board, written as dances.
    closed_out: int = 0

    def to_json(self) -> dict[str, Any]:
        """The report as its JSON object."""
        out = _to_json(self)
        assert isinstance(out, dict)
        return out

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Report:
        """A report's JSON object read back (the keys a scan adds are not read). Raises :class:`InputError`
        where it is not a report's."""
        try:
            made = _from_json(cls, doc, "$")
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"not a digitise report: {exc}") from exc
        assert isinstance(made, Report)
        return made


# -- JSON, field by field, from the types ------------------------------------------------------


def json_of(part: Turn | Skipped | Candidate | Game | Summary | Result | Place) -> dict[str, Any]:
    """A part of a report as its JSON object, as :meth:`Report.to_json` writes it inside the report."""
    out = _to_json(part)
    assert isinstance(out, dict)
    return out


@cache
def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def _optional(field: dataclasses.Field[Any]) -> bool:
    """Whether the field is left out of the JSON when it is ``None``."""
    return field.default is None


def _is_flags(hint: Any) -> bool:
    args = [a for a in get_args(hint) if a is not type(None)]
    inner = args[0] if get_origin(hint) in (Union, types.UnionType) and len(args) == 1 else hint
    return get_origin(inner) is tuple and get_args(inner)[:1] == (Flag,)


def _to_json(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for field in dataclasses.fields(value):
            item = getattr(value, field.name)
            if item is None and _optional(field):
                continue
            if _is_flags(_hints(type(value))[field.name]):
                out[field.name] = [flag.text for flag in item]
                out[CODES_KEY[field.name]] = [flag.code for flag in item]
            else:
                out[field.name] = _to_json(item)
        return out
    if isinstance(value, tuple):
        return [_to_json(item) for item in value]
    return value


def flags_of(doc: Mapping[str, Any], key: str, where: str | None = None) -> tuple[Flag, ...]:
    """The flags a JSON object lists under ``key`` (texts) and its codes' key beside it, as :meth:`Report.from_json`
    reads them (a scan's ``scan_notes``). Raises ``ValueError`` for a text no reason has."""
    said = [str(text) for text in doc.get(key) or []]
    return tuple(_flag(text, code, where or key) for text, code in zip(said, codes_of(doc, key), strict=True))


def _flag(text: str, code: str, where: str) -> Flag:
    reason = reason_of(text) if not code else reason_by_code(code)
    if reason is None:
        raise ValueError(f"{where}: {text!r} is no reason digitise gives")
    return Flag(reason, text)


def _from_json(hint: Any, value: Any, where: str) -> Any:
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        if value is None:
            return None
        inner = [a for a in get_args(hint) if a is not type(None)]
        return _from_json(inner[0], value, where)
    if dataclasses.is_dataclass(hint):
        assert isinstance(hint, type)
        if not isinstance(value, Mapping):
            raise TypeError(f"{where}: not an object")
        made: dict[str, Any] = {}
        for field in dataclasses.fields(hint):
            at = f"{where}.{field.name}"
            if field.name not in value:
                if _optional(field) or field.default is not dataclasses.MISSING:
                    continue
                raise KeyError(f"{at} is missing")
            field_hint = _hints(hint)[field.name]
            if _is_flags(field_hint):
                made[field.name] = flags_of(value, field.name, at)
            else:
                made[field.name] = _from_json(field_hint, value[field.name], at)
        return hint(**made)
    if origin is tuple:
        if not isinstance(value, list):
            raise TypeError(f"{where}: not a list")
        args = get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_from_json(args[0], item, f"{where}[{k}]") for k, item in enumerate(value))
        return tuple(_from_json(arg, item, f"{where}[{k}]") for k, (arg, item) in
                     enumerate(zip(args, value, strict=True)))
    if origin is Literal:
        if value not in get_args(hint):
            raise ValueError(f"{where}: {value!r} is not one of {', '.join(map(str, get_args(hint)))}")
        return value
    if hint is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value) if isinstance(value, int) else value
    if not isinstance(value, hint) or (hint is int and isinstance(value, bool)):
        raise TypeError(f"{where}: not {hint.__name__}")
    return value


# -- the schema --------------------------------------------------------------------------------


def schema() -> dict[str, Any]:
    """The JSON schema (draft 2020-12) of a report, generated from :class:`Report` and what it holds."""
    defs: dict[str, Any] = {}
    top = _object_schema(Report, defs)
    # A scan adds keys of its own (the page files, the readings, its notes): not the solve's to describe.
    top["additionalProperties"] = True
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "digitise report", "description": (Report.__doc__ or "").strip(), **top,
            "$defs": dict(sorted(defs.items()))}


def schema_text() -> str:
    """:func:`schema` as the deterministic JSON text committed as ``docs/report.schema.json``."""
    return json.dumps(schema(), indent=1, ensure_ascii=False) + "\n"


def _object_schema(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for field in dataclasses.fields(cls):
        hint = _hints(cls)[field.name]
        names = [field.name]
        if _is_flags(hint):
            names.append(CODES_KEY[field.name])
            properties[field.name] = {"type": "array", "items": {"type": "string"}}
            properties[CODES_KEY[field.name]] = {"type": "array", "items": {"$ref": "#/$defs/ReasonCode"}}
            defs["ReasonCode"] = {"description": "A reason's stable code (digitise.solve.reasons.Reason), beside its "
                                                 "text in the list of the same name",
                                  "enum": [reason.code for reason in Reason]}
        else:
            properties[field.name] = _schema_of(hint, defs, optional=_optional(field))
        if field.default is dataclasses.MISSING:
            required += names
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _schema_of(hint: Any, defs: dict[str, Any], *, optional: bool = False) -> dict[str, Any]:
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        inner = [a for a in get_args(hint) if a is not type(None)]
        assert len(inner) == 1
        # Left out when None: present, it has a value.
        return _schema_of(inner[0], defs) if optional else {"anyOf": [_schema_of(inner[0], defs), {"type": "null"}]}
    if dataclasses.is_dataclass(hint):
        assert isinstance(hint, type)
        if hint.__name__ not in defs:
            defs[hint.__name__] = {}
            defs[hint.__name__] = {"description": (hint.__doc__ or "").strip(), **_object_schema(hint, defs)}
        return {"$ref": f"#/$defs/{hint.__name__}"}
    if origin is tuple:
        args = get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": _schema_of(args[0], defs)}
        return {"type": "array", "prefixItems": [_schema_of(a, defs) for a in args], "items": False,
                "minItems": len(args)}
    if origin is Literal:
        return {"enum": list(get_args(hint))}
    return {"type": {bool: "boolean", int: "integer", float: "number", str: "string"}[hint]}
