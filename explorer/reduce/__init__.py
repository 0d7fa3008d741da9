"""The smallest model that still shows a finding: cuts of a model around a departing value, checked by comparing them, written as a folder others can open."""
