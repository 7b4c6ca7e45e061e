"""The simulator's SIMT engine (``pl.simt.launch``): a vectorised interpreter of SIMT code
(``interp.py``, ``values.py``), its cross-thread race check (``races.py``), its cost model
(``cost.py``) and the instruction's sim rule (``rule.py``)."""
