"""The recording of a run: events, iterations, recorded values, spill folders and the trace file format."""
