"""The `engram` command: thin — parse, call the client or an adapter, render with rich.

The app and what commands share live in cli/app.py; the commands, by domain, in
cli/operations.py, cli/memory.py, cli/improve.py, cli/capture.py, cli/manage.py, cli/export.py and cli/explorer/command.py (importing them registers them).
"""

from __future__ import annotations

import gc
import sys

from engram.cli.app import Options, app, print_error
from engram.cli.errors import explain

# Importing a command module registers its commands; `engram --help` lists them in this order.
from engram.cli import operations  # noqa: F401, E402, I001
from engram.cli import memory  # noqa: F401, E402
from engram.cli import improve  # noqa: F401, E402
from engram.cli import capture  # noqa: F401, E402
from engram.cli import manage  # noqa: F401, E402
from engram.cli import export  # noqa: F401, E402
from engram.cli.explorer import command  # noqa: F401, E402


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # one line with the fix, never a traceback (unless --debug)
        if Options.debug:
            raise
        print_error(*explain(exc))
        sys.exit(1)
    finally:
        # Celery result handles left in reference cycles unsubscribe from Redis when collected;
        # collect them now, not during interpreter shutdown when imports no longer work.
        gc.collect()


if __name__ == "__main__":
    main()
