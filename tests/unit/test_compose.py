"""docker/compose.yml, checked offline (no Docker engine here): it parses, every ENGRAM_* variable
it sets is a setting Engram reads, with a value the setting accepts, and Postgres' shared memory
holds the HNSW builds the sweep asks for."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from engram.settings import Settings

COMPOSE = Path(__file__).resolve().parents[2] / "docker" / "compose.yml"


def _default(value: str) -> str:
    """${NAME:-default} -> default; ${NAME:?message} -> a placeholder; plain values as they are."""
    found = re.fullmatch(r"\$\{[A-Z_]+(?::-(.*)|:\?.*)\}", value)
    return value if not found else (found.group(1) if found.group(1) is not None else "x" * 64)


def _bytes(size: str) -> int:
    number, unit = re.fullmatch(r"(\d+)\s*([kmg])b?", size.lower()).groups()
    return int(number) * 1024 ** " kmg".index(unit)


def test_every_engram_variable_of_the_compose_file_is_a_valid_setting():
    compose = yaml.safe_load(COMPOSE.read_text())
    environment = compose["x-engram"]["environment"]
    names = {f"ENGRAM_{field.upper()}": field for field in Settings.model_fields}
    given = {k: _default(str(v)) for k, v in environment.items() if k.startswith("ENGRAM_")}
    assert set(given) <= set(names), set(given) - set(names)
    Settings(**{names[k]: v for k, v in given.items() if v != ""})  # raises on a value the setting refuses


def test_postgres_shared_memory_holds_the_sweeps_hnsw_build():
    compose = yaml.safe_load(COMPOSE.read_text())
    memory = _default(compose["x-engram"]["environment"]["ENGRAM_VECTOR_INDEX_BUILD_MEMORY"])
    assert _bytes(compose["services"]["postgres"]["shm_size"]) >= _bytes(memory)
