"""What an unexpected error means to someone at a terminal: one line, with the fix.

`main()` turns any exception a command lets through into that line and exit code 1;
`engram --debug ...` shows the traceback instead."""

from __future__ import annotations

import re

DOCTOR = "engram doctor checks the services and prints a fix for each"


class CommandError(Exception):
    """A command's refusal: the message and the fix, printed as one line."""

    def __init__(self, message: str, fix: str = ""):
        super().__init__(message)
        self.fix = fix


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _chain(exc: BaseException) -> list[BaseException]:
    out, seen = [], set()
    while exc is not None and id(exc) not in seen:
        out.append(exc)
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return out


def explain(exc: BaseException) -> tuple[str, str]:
    """(message, fix) for an exception no command handled itself."""
    if isinstance(exc, CommandError):
        return str(exc), exc.fix
    names = {type(e).__name__ for e in _chain(exc)}
    message = _first_line(exc)
    if "EngramError" in names:
        return message, task_fix(exc, message)
    if names & {"TimeoutError", "ResultTimeoutError"}:
        return (f"no answer from a worker in time ({message})",
                "start one with `engram worker` (with the same ENGRAM_REDIS_URL / ENGRAM_BROKER_URL); " + DOCTOR)
    if "SchemaMismatch" in names:
        text, _, fix = message.partition(" (fix: ")
        return text, fix.rstrip(")") or "engram db upgrade"
    if names & {"ServiceError"}:
        return message, DOCTOR
    if names & {"OperationalError", "InterfaceError"} and "sqlalchemy" in _modules(exc):
        return f"cannot reach PostgreSQL: {message}", DOCTOR
    if names & {"UndefinedTable", "UndefinedObject", "UndefinedFile", "FeatureNotSupported"}:
        return f"the database is not ready for Engram: {message}", "engram doctor, then engram db upgrade"
    if names & {"ConnectionError", "OperationalError", "ConnectionRefusedError"}:
        return f"cannot reach Redis or the broker: {message}", DOCTOR
    if isinstance(exc, OSError):
        return f"{type(exc).__name__}: {message}", "check the path and its permissions"
    return f"{type(exc).__name__}: {message}", "rerun as `engram --debug ...` for the traceback; " + DOCTOR


def _modules(exc: BaseException) -> str:
    return " ".join(type(e).__module__ for e in _chain(exc))


def task_fix(exc: BaseException, message: str) -> str:
    """The fix for a public task's refusal (unknown dataset, missing grant, bad payload)."""
    if re.search(r"no run (is|starts with) ", message) or re.search(r"^(engram\.\S+: )?run \S+ does not exist", message):
        return "engram status -d DATASET lists a dataset's runs (their ids, shortened)"
    if "more than one" in message:
        return "give more of the id"
    if re.search(r"does not exist for user '([^']*)'", message):
        return "engram datasets lists the datasets you can use (--user: whose)"
    grant = re.search(r"user '([^']*)' has no (\w+) grant on dataset '([^']*)'", message)
    if grant:
        user, permission, dataset = grant.groups()
        return f"the dataset's owner runs: engram share {dataset} {user} -p {permission}"
    if "has no" in message and "grant" in message:
        return "ask the dataset's owner for the grant (engram share)"
    if "invalid payload" in message:
        return "check the arguments (engram <command> --help)"
    return "check the arguments; the worker's log has the details"
