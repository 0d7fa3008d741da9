"""A model loaded, checked and saved: parsing, weights mapped from their files, guards, shape inference, typing rules, value specs and feeds."""
