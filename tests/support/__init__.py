"""Helpers the tests of several folders share, imported as `tests.support.<module>`: model builders, judges written
apart from explorer, and readers of what the app, its pages and the diagrams show."""
