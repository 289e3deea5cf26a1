"""Pure parts of the improve stages that do real work now (the tasks persist their results)."""
