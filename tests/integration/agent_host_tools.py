"""A host application's tools, allow-listed for the agentic tests' worker via ENGRAM_AGENT_TOOLS."""

from engram.pipelines.agentic.tools import host_tool

CALLS: list[str] = []


@host_tool("order_status", "look up an order's status", {"order": "the order number"}, ("order",))
def order_status(ctx, arguments):
    return f"order {arguments['order']} of {ctx.user} in {ctx.dataset}: shipped"
