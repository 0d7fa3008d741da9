"""Handing a finding over: Model Explorer's node data, a self-contained HTML report, rich notebook displays and
the smallest model that still parts the same way."""
