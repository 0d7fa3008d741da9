"""Files explorer touches: confined reads, archives, atomic writes, scratch folders and settings."""
