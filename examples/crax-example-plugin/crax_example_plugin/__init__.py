"""An example crax plugin package (see plugin.py for the hooks it implements)."""
