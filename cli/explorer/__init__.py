"""`engram explorer`: a read-only web app over a user's memory, on localhost.

It lives under cli/ beside the MCP server because, like it, it is an entry point: it turns HTTP
requests into the public read tasks (engram.datasets, status, list, read, entity, graph,
recall, skills.list, sessions) through the EngramClient, so every grant is checked where recall
checks it, by the task. Users log in with the bearer tokens of `engram mcp --http` (the same
JSON token map). Every page is server-rendered HTML, or JSON when the request asks for it.

app.py: the Starlette app, login and the page wrapper; pages.py: the pages; views.py: what
they show (pure); reader.py: the task calls and their refusals; auth.py: tokens and sessions;
command.py: the `engram explorer` command; templates/ and static/: package data.
"""


def create_app(client, tokens: dict[str, str]):
    from engram.cli.explorer.app import create_app as build

    return build(client, tokens)
