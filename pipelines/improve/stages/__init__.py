"""The improve stages: each module holds one stage's gate/load/compute/persist over ctx.ports (declared in pipelines/improve/flow.py)."""
