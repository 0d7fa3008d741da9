"""Reports on recurrent cells: the RNN report and the report of a cell found in any form."""
